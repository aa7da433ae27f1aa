"""``fill_qrels``: judge the holes of a pool with UMBRELA, merge the grades into the qrels, report what changed.

The holes are the unjudged (query, document) pairs in the runs' top ``fill_depth`` (``holes.choose``, within
``fill_budget``). Only they are sent to the LLM (cache and batch mode as ``umbrela_judge``). The merged qrels
keep every human grade and add the LLM's (failed judgments stay holes); a side file lists the LLM-origin
grades. ``fill_report.changes`` compares the runs under the two qrels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servers.judge.common import inputs
from servers.judge.common.llm_settings import judge_settings
from servers.judge.common.progress import Progress
from servers.judge.common.prompting import Prompts
from servers.judge.relevance import holes, umbrela
from servers.judge.relevance.agreement import read_qrels
from servers.judge.relevance.fill_report import changes
from servers.judge.relevance.run import judge_umbrela_pairs
from ultra_base.errors import InputError
from ultra_kit import failures
from ultra_kit.files import atomic_write, atomic_write_json, result_path, unique_path
from ultra_kit.limits.caps import capped, count
from ultra_kit.paths.output_root import check_save_path


def _pairs(chosen: list[tuple[str, str]], queries_path: str, corpus_path: str) -> list[inputs.Pair]:
    queries = inputs.read_queries(queries_path)
    texts = inputs.read_corpus(corpus_path, {docid for _, docid in chosen})
    missing = sorted({d for _, d in chosen} - texts.keys()) + sorted({q for q, _ in chosen} - queries.keys())
    if missing:
        raise InputError(f"{len(missing)} ids to judge are not in the queries or corpus file, e.g. {missing[:5]}")
    return [inputs.Pair(qid, queries[qid], docid, texts[docid], 0) for qid, docid in chosen]


def _recorded(chosen: list[tuple[str, str]], grades: dict[str, dict[str, int]]) -> list[umbrela.Judgment]:
    """The chosen holes' grades read from recorded qrels; a hole they do not grade fails (``error``)."""
    out = []
    for qid, docid in chosen:
        grade = grades.get(qid, {}).get(docid)
        status, error = ("ok", None) if grade is not None else ("error", "no recorded grade for this pair")
        out.append(umbrela.Judgment(qid, docid, 0, grade, status, error=error))
    return out


def _write_lines(path: Path, lines: list[str]) -> Path:
    return atomic_write(path, lambda handle: handle.writelines(lines))


async def run_fill_qrels(
    *,
    human_qrels_path: str,
    run_paths: list[str],
    queries_path: str,
    corpus_path: str,
    fill_depth: int,
    fill_budget: int | None,
    fill_measures: list[str],
    relevant_grade: int,
    fill_alpha: float,
    fill_resamples: int,
    fill_seed: int,
    fill_recorded_qrels: str,
    judge_llm: dict[str, Any],
    judge_cache: str,
    save_path: str,
    max_failed_fraction: float,
    progress: Progress | None = None,
    **pacing: float,
) -> dict[str, Any]:
    """``fill_qrels`` for Python callers (``progress(done, total)`` per hole judged; ``pacing``: ``backoff_base`` /
    ``backoff_max``, for tests). With ``fill_recorded_qrels`` the chosen holes take their grades from that qrels
    file (a hole it does not grade fails, counted) and ``judge_llm`` is not read."""
    failures.check_fraction(max_failed_fraction)
    if not run_paths:
        raise InputError("run_paths is empty: give the runs whose top fill_depth documents are to be judged")
    if fill_budget is not None:
        count(fill_budget, "fill_budget (null: no limit)")
    capped(fill_resamples, "fill_resamples", server="judge", name="fill_resamples", minimum=1)
    capped(fill_depth, "fill_depth", server="judge", name="fill_depth", minimum=1)
    # every pair of runs is tested on every measure, fill_resamples times, before and after the filling
    capped(len(run_paths), "run_paths (runs tested pair by pair)", server="judge", name="fill_runs")
    capped(len(fill_measures), "fill_measures", server="judge", name="fill_measures")
    check_save_path(save_path, "fill_qrels", ".json")
    settings = None if fill_recorded_qrels else judge_settings(judge_llm, **pacing)
    human = read_qrels(human_qrels_path)
    names = [Path(p).name.removesuffix(".trec") for p in run_paths]
    if len(set(names)) != len(names):
        raise InputError(f"the runs' file names must differ (they name the runs in the report): {names}")
    ranked = {n: inputs.top_documents(p, depth=fill_depth).docids for n, p in zip(names, run_paths, strict=True)}
    all_holes = holes.find_holes(human, ranked, fill_depth)
    chosen = holes.choose(human, ranked, fill_depth, budget=fill_budget)
    judgments: list[umbrela.Judgment] = []
    usage: dict[str, Any] = {}
    if chosen and fill_recorded_qrels:
        judgments = _recorded(chosen, read_qrels(fill_recorded_qrels))
        usage = {"requests": 0, "recorded": fill_recorded_qrels}  # the cost table's model column says "recorded"
    elif chosen and settings is not None:
        pairs = _pairs(chosen, queries_path, corpus_path)
        judgments, judged = await judge_umbrela_pairs(pairs, settings, judge_cache, Prompts.as_written(), progress)
        usage = judged.usage
    if judgments:
        failed, ok = failures.summarise((j.status, j.error) for j in judgments)
        failures.check(failed, ok, tool="fill_qrels", noun="judgments", max_failed_fraction=max_failed_fraction)
    else:
        failed = failures.summarise([])[0]
    graded = [j for j in judgments if j.status == "ok"]
    merged = {qid: dict(docs) for qid, docs in human.items()}
    for judgment in graded:
        merged[judgment.qid][judgment.docid] = judgment.score
    report = changes(
        human,
        merged,
        dict(zip(names, run_paths, strict=True)),
        list(fill_measures),
        depth=fill_depth,
        relevance_level=relevant_grade,
        alpha=fill_alpha,
        n_resamples=fill_resamples,
        seed=fill_seed,
    )
    out = result_path(save_path, "fill_qrels")
    qrels_path = unique_path(out.with_suffix(".qrels"))
    _write_lines(qrels_path, [f"{q} 0 {d} {g}\n" for q, docs in merged.items() for d, g in docs.items()])
    origin_path = unique_path(out.with_suffix(".origin.tsv"))
    origin = (
        f"recorded:{fill_recorded_qrels}"
        if settings is None
        else f"{umbrela.PROMPT_NAME}:{settings.public().get('model_id', '')}"
    )
    _write_lines(origin_path, ["qid\tdocid\tgrade\torigin\n"] +
                 [f"{j.qid}\t{j.docid}\t{j.score}\t{origin}\n" for j in graded])  # fmt: skip
    counts = {"holes": len(all_holes), "chosen": len(chosen), "judged": len(graded),
              "failed": len(judgments) - len(graded), "holes_left": len(all_holes) - len(graded)}  # fmt: skip
    document = {
        "tool": "fill_qrels", **report, "fill_counts": counts, "failed": failed, "usage": usage,
        "merged_qrels_path": str(qrels_path), "origin_path": str(origin_path),
        "llm_grades": [j.as_dict() for j in judgments],
        "settings": {"human_qrels_path": human_qrels_path, "run_paths": list(run_paths), "fill_depth": fill_depth,
                     "fill_budget": fill_budget, "fill_measures": list(fill_measures), "relevant_grade": relevant_grade,
                     "fill_alpha": fill_alpha, "fill_resamples": fill_resamples, "fill_seed": fill_seed,
                     **({"fill_recorded_qrels": fill_recorded_qrels} if settings is None else
                        {"judge_llm": settings.public(), "judge_cache": judge_cache or None})},
    }  # fmt: skip
    atomic_write_json(out, document)
    return {**report, "fill_counts": counts, "failed": failed, "usage": usage, "merged_qrels_path": str(qrels_path),
            "origin_path": str(origin_path), "result_path": str(out)}  # fmt: skip
