"""``nuggetize`` for Python callers: read the inputs, create/score/reuse nuggets, assign answers, write files.

settings = tool_settings(run_nuggetize, defaults("judge"))  # parameter.yaml's values for the settings
result = asyncio.run(run_nuggetize(query="...", passages={...}, answers={"runA": "..."}, **settings))
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.judge.common import inputs
from servers.judge.common.jury import RELIABILITY, Judged
from servers.judge.common.llm_settings import judge_settings
from servers.judge.common.overrides import call_prompts
from servers.judge.common.progress import Progress, panel_progress, ticked
from servers.judge.common.scripts import WARNINGS, text_warnings
from servers.judge.nuggets import assigning
from servers.judge.nuggets import stages as nuggets
from ultra_base.errors import InputError, existing_file
from ultra_kit import failures
from ultra_kit.failures import FailedSummary
from ultra_kit.files import atomic_write_json, atomic_write_jsonl, result_path, unique_path
from ultra_kit.limits.caps import capped, count
from ultra_kit.limits.json_files import load_jsonl_file
from ultra_kit.readers import jsonl_rows
from ultra_llm.batch_mode.passes import in_passes
from ultra_llm.cache import open_cache
from ultra_llm.client import LLMClient, LLMSettings
from ultra_llm.panel import sum_usage

ANSWER_KEYS = ("answer", "pred_answer", "response", "text", "prediction")
RUN_KEYS = ("run", "run_id", "answer_id", "system")


class NuggetizeResult(TypedDict):
    result_path: str
    nuggets_path: str
    assignments_path: str
    aggregate: dict[str, dict[str, Any]]
    per_query: dict[str, dict[str, dict[str, Any]]]
    counts: dict[str, int]
    failed: FailedSummary
    warnings: Annotated[list[str], Field(description=WARNINGS)]
    usage: dict[str, Any]
    prompt: dict[str, str]
    reliability: Annotated[dict[str, dict[str, Any]], Field(description=RELIABILITY)]


def read_answers(path: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """``{qid: {run: answer}}`` from JSONL rows with a query id, an answer text and an optional run name."""
    file = existing_file(path, what="answers file")
    answers: dict[str, dict[str, str]] = {}
    for line, row in jsonl_rows(file):
        qid = inputs._field(row, inputs.QID_KEYS, file, line, "query id")
        text = inputs._field(row, ANSWER_KEYS, file, line, "answer text", allow_empty=True)
        run = next((str(row[k]) for k in RUN_KEYS if row.get(k) not in (None, "")), "run")
        if run in answers.setdefault(qid, {}):
            raise InputError("a query has two answers of the same run", path=str(file), line=line)
        answers[qid][run] = text
    return answers


def read_nuggets(path: str | os.PathLike[str]) -> dict[str, nuggets.QueryNuggets]:
    """Stored nuggets (the ``nuggets_path`` a previous call wrote), by query id."""
    file = existing_file(path, what="nuggets file")
    stored = {}
    for line, row in jsonl_rows(file):
        try:
            item = nuggets.QueryNuggets.from_record(row)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"not a nuggets record ({exc})", path=str(file), line=line) from None
        stored[item.qid] = item
    return stored


def _inline_answers(answers: Mapping[str, str] | Sequence[str] | str) -> dict[str, str]:
    if isinstance(answers, str):
        return {"run": answers}
    if isinstance(answers, Mapping):
        return {str(k): str(v) for k, v in answers.items()}
    if isinstance(answers, Sequence):
        return {f"answer{i}": str(text) for i, text in enumerate(answers, start=1)}
    raise InputError("answers must be a text, a {run: text} mapping or a list of texts")


def _filter(pairs: list[inputs.Pair], scores: Mapping[str, Any] | None, min_judgment: int) -> dict[str, Any]:
    """The passages of each query that are used to create nuggets, in rank order."""
    by_query: dict[str, dict[str, Any]] = {}
    for pair in sorted(pairs, key=lambda p: p.rank):
        entry = by_query.setdefault(pair.qid, {"query": pair.query, "passages": [], "unjudged": 0})
        if scores is None:
            entry["passages"].append(pair.passage)
            continue
        grade = (scores.get(pair.qid) or {}).get(pair.docid)
        if grade is None:
            entry["unjudged"] += 1
        elif grade >= min_judgment:
            entry["passages"].append(pair.passage)
    return by_query


async def run_nuggetize(
    *,
    query: str | None = None,
    passages: dict[str, str] | list[str] | None = None,
    answers: dict[str, str] | list[str] | str | None = None,
    query_id: str = "q1",
    scores: dict[str, dict[str, int | None]] | None = None,
    nuggets_path: str = "",
    queries_path: str,
    run_path: str,
    corpus_path: str,
    answers_path: str,
    depth: int,
    min_judgment: int,
    max_nuggets: int,
    nugget_top_k: int,
    judge_llm: dict[str, Any],
    judge_cache: str,
    save_path: str,
    max_failed_fraction: float,
    prompt_file: Mapping[str, str],
    language: str,
    progress: Progress | None = None,
    **pacing: float,
) -> NuggetizeResult:
    """Nuggets per query (created and scored once, or reused from ``nuggets_path``), assigned for every answer.

    The unit of ``failed`` is the batch (one create window, score batch or assign batch): when every
    batch failed, or more than ``max_failed_fraction`` of them, it raises ``InputError`` and writes nothing.
    Queries, passages and answers mostly not in ``language``'s script give a ``warnings`` entry.
    """
    failures.check_fraction(max_failed_fraction)
    capped(depth, "depth", server="judge", name="depth", minimum=1)
    capped(max_nuggets, "max_nuggets", server="judge", name="max_nuggets", minimum=1)
    count(nugget_top_k, "nugget_top_k (0 = assign every nugget)")
    prompts = call_prompts(language, prompt_file, names=nuggets.PROMPT_NAMES)
    settings = judge_settings(judge_llm, **pacing)
    retries = settings.members()[0].max_retries
    stored = read_nuggets(nuggets_path) if nuggets_path else {}
    if query is not None:
        if answers is None:
            raise InputError("inline mode needs query and answers (and passages unless nuggets_path has the query)")
        pairs = inputs.inline_pairs(query, passages, query_id=query_id) if passages else []
        wanted = {query_id: {"query": query, "passages": [], "unjudged": 0}}
        wanted.update(_filter(pairs, scores, min_judgment))
        all_answers = {query_id: _inline_answers(answers)}
    else:
        if not answers_path:
            raise InputError("give query, passages and answers inline, or answers_path (with the query files)")
        all_answers = read_answers(answers_path)
        pairs = inputs.file_pairs(queries_path, run_path, corpus_path, depth=depth) if run_path else []
        wanted = _filter(pairs, scores, min_judgment)
        missing = [qid for qid in all_answers if qid not in wanted and qid not in stored]
        if missing:
            raise InputError(f"answers for queries without passages or stored nuggets: {missing[:5]}", answers_path)
    said = [info["query"] for info in wanted.values()] + [p for info in wanted.values() for p in info["passages"]]
    warnings = text_warnings(said + [text for runs in all_answers.values() for text in runs.values()], language)
    creator = settings.members()[0]  # creates and scores the nuggets; every member of a jury assigns them
    cache = open_cache(judge_cache)
    try:
        async with LLMClient(creator, cache) as client:

            async def prepare(qid: str) -> nuggets.QueryNuggets:
                item = stored.get(qid)
                if item is None:
                    info = wanted[qid]
                    item = await nuggets.create(
                        qid, info["query"], info["passages"], client, prompts=prompts, max_retries=retries,
                        max_nuggets=max_nuggets,
                    )  # fmt: skip
                    if not nuggets.waits_for_a_batch(item):
                        await nuggets.score(item, client, prompts=prompts, max_retries=retries)
                return item

            qids = sorted(set(all_answers) | set(wanted))
            made = panel_progress(progress, len(qids))  # a step per query's nuggets, then per answer assigned
            prepared = await in_passes(client, lambda: asyncio.gather(*(ticked(made, prepare(q)) for q in qids)))
            usage = client.usage.as_dict()
        work = [
            (qid, run, item, text, nuggets.selected(item, nugget_top_k))
            for qid, item in zip(qids, prepared, strict=True)
            for run, text in all_answers.get(qid, {}).items()
        ]
        steps = len(qids) + len(work) * len(settings.members()) * settings.samples
        step = panel_progress(progress, steps, len(qids))
        assigned, judged = await assigning.assign_all(work, settings, cache, step, prompts)
    finally:
        cache.close()
    answers: dict[str, list[dict[str, Any]]] = {}
    for (qid, run, item, _, indices), (labels, batches, juries) in zip(work, assigned, strict=True):
        answers.setdefault(qid, []).append(_answer_record(qid, run, item, indices, labels, batches, juries))
    done = [(item, answers.get(qid, [])) for qid, item in zip(qids, prepared, strict=True)]
    batches = [b for item, records in done for b in _new_batches(item, records)]
    failed, ok = failures.summarise((b.status, b.error) for b in batches)
    failures.check(failed, ok, tool="nuggetize", noun="batches", max_failed_fraction=max_failed_fraction)
    judged.usage = sum_usage([usage, judged.usage])
    return _write(done, wanted, stored, settings, judged, locals_settings(min_judgment, max_nuggets, nugget_top_k),
                  save_path, failed, nuggets.prompt_info(prompts), warnings)  # fmt: skip


def _new_batches(item: nuggets.QueryNuggets, answers: list[dict[str, Any]]) -> list[nuggets.Batch]:
    """The batches this call sent: the query's create / score batches unless reused, and every assign batch."""
    own = [] if item.reused else list(item.batches)
    return own + [nuggets.Batch(**b) for answer in answers for b in answer["batches"]]


def locals_settings(min_judgment: int, max_nuggets: int, nugget_top_k: int) -> dict[str, Any]:
    return {"min_judgment": min_judgment, "max_nuggets": max_nuggets, "nugget_top_k": nugget_top_k}


def _answer_record(
    qid: str,
    run: str,
    item: nuggets.QueryNuggets,
    indices: list[int],
    labels: list[str | None],
    batches: list[nuggets.Batch],
    juries: list[dict[str, Any] | None],
) -> dict[str, Any]:
    importance = [item.importance[i] for i in indices]
    complete = all(label is not None for label in labels) and all(imp is not None for imp in importance)
    failed = sum(b.status != "ok" for b in batches)
    if not indices:
        status = "incomplete" if item.failed_batches else "no_nuggets"  # no nuggets because a batch failed
    elif complete and not item.failed_batches:
        status = "ok"
    else:
        status = "incomplete"
    return {
        "qid": qid,
        "run": run,
        "status": status,
        "scores": nuggets.answer_scores(importance, labels),
        "nuggets": [
            {"text": item.texts[i], "importance": imp, "assignment": lab, **({"jury": jury} if jury else {})}
            for i, imp, lab, jury in zip(indices, importance, labels, juries, strict=True)
        ],
        "num_unlabelled": sum(lab is None or imp is None for imp, lab in zip(importance, labels, strict=True)),
        "failed_batches": failed,
        "batches": [b.record() for b in batches],
    }


def _write(
    done: list[tuple[nuggets.QueryNuggets, list[dict[str, Any]]]],
    wanted: dict[str, Any],
    stored: dict[str, Any],
    settings: LLMSettings,
    judged: Judged,
    options: dict[str, Any],
    save_path: str,
    failed: FailedSummary,
    prompt: dict[str, str],
    warnings: list[str],
) -> NuggetizeResult:
    per_query: dict[str, dict[str, dict[str, Any]]] = {}
    by_run: dict[str, list[dict[str, Any]]] = {}
    counts = {"queries": len(done), "reused_queries": 0, "nuggets": 0, "answers": 0, "ok_answers": 0}
    counts.update({"create_failed": 0, "score_failed": 0, "assign_failed": 0, "batches": 0})
    records = []
    for item, answers in done:
        counts["reused_queries"] += item.reused
        counts["nuggets"] += len(item.texts)
        record = item.as_record()
        record["unjudged_passages"] = wanted.get(item.qid, {}).get("unjudged", 0)
        records.append(record)
        for batch in item.batches if not item.reused else []:
            counts["batches"] += 1
            counts[f"{batch.stage}_failed"] += batch.status != "ok"
        for answer in answers:
            counts["answers"] += 1
            counts["ok_answers"] += answer["status"] == "ok"
            counts["batches"] += len(answer["batches"])
            counts["assign_failed"] += answer["failed_batches"]
            per_query.setdefault(item.qid, {})[answer["run"]] = {
                **answer["scores"],
                "status": answer["status"],
                "num_nuggets": len(answer["nuggets"]),
            }
            by_run.setdefault(answer["run"], []).append(answer)
    aggregate = {run: _mean(answers) for run, answers in sorted(by_run.items())}
    out = result_path(save_path, "nuggetize")
    nuggets_file = unique_path(out.with_name(out.stem + ".nuggets.jsonl"))
    assignments_file = unique_path(out.with_name(out.stem + ".assignments.jsonl"))
    atomic_write_jsonl(nuggets_file, records)
    atomic_write_jsonl(assignments_file, [a for _, answers in done for a in answers])
    document = {
        "tool": "nuggetize",
        "aggregate": aggregate,
        "counts": counts,
        "failed": failed,
        "warnings": warnings,
        "per_query": per_query,
        "metric_kinds": {**dict.fromkeys(nuggets.SCORE_NAMES, "continuous"), "num_nuggets": "count"},
        "usage": judged.usage,
        "prompt": prompt,
        "panel": judged.panel(settings),
        "nuggets_path": str(nuggets_file),
        "assignments_path": str(assignments_file),
        "settings": {"judge_llm": settings.public(), **options, "reused_from": sorted(stored) or None},
    }
    atomic_write_json(out, document)
    return NuggetizeResult(
        result_path=str(out),
        nuggets_path=str(nuggets_file),
        assignments_path=str(assignments_file),
        aggregate=aggregate,
        per_query=per_query,
        counts=counts,
        failed=failed,
        warnings=warnings,
        usage=judged.usage,
        prompt=prompt,
        reliability=judged.reliability,
    )


def _mean(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """Each score's mean over the run's answers with status ok and a value; the rest are counted."""
    ok = [a for a in answers if a["status"] == "ok"]
    result: dict[str, Any] = {}
    for name in nuggets.SCORE_NAMES:
        values = [a["scores"][name] for a in ok if a["scores"][name] is not None]
        result[name] = sum(values) / len(values) if values else None
        result[f"num_{name}"] = len(values)
    result["num_answers"] = len(answers)
    result["num_excluded"] = len(answers) - len(ok)
    result["excluded_by_status"] = {
        s: sum(a["status"] == s for a in answers)
        for s in ("incomplete", "no_nuggets")
        if any(a["status"] == s for a in answers)
    }
    return result


def dump(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a JSONL file this module wrote (for callers and tests)."""
    return load_jsonl_file(path, kind="nuggets")
