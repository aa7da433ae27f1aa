"""UMBRELA relevance judging (Upadhyay et al., arXiv:2406.06519): a 0-3 grade per (query, passage).

One request per pair with the ``umbrela_v1`` prompt; the grade is read by ``parsing.parse_grade``.
A reply without a readable grade is asked again (the bad reply and a short repair message are
appended) up to ``max_retries`` times, then reported as ``parse_error`` with the raw reply. It
never becomes a score. From the grades: per query the mean grade and, with relevant = grade >= 2,
``P@k``, ``AP@k`` and ``MRR``; and a qrels file that ``evaluate_trec`` reads.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from servers.judge.common.inputs import Pair
from servers.judge.common.parsing import ParsedScore, parse_grade
from servers.judge.common.progress import Progress
from servers.judge.common.prompting import Prompt, Prompts
from ultra_kit.files import atomic_write
from ultra_llm.asking import from_cache_note
from ultra_llm.client import LLMClient

PROMPT_NAME = "umbrela_v1"
REPAIR_PROMPT_NAME = "umbrela_repair_v1"
RELEVANT_GRADE = 2
# The reference implementation's sampling; max_tokens leaves room for a model that explains anyway.
SAMPLING = {"temperature": 0.0, "top_p": 1.0, "frequency_penalty": 0.5, "max_tokens": 100, "seed": 42}
# Opt-in structured output (judge_llm.structured_output): a JSON object {"score": 0-3}, read by the same parser.
SCORE_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "umbrela_grade",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 3}},
            "required": ["score"],
            "additionalProperties": False,
        },
    },
}


@dataclass
class Judgment:
    """The grade of one pair, or why there is none."""

    qid: str
    docid: str
    rank: int
    score: int | None
    status: Literal["ok", "parse_error", "error"]
    found_by: str | None = None  # marker | json | phrase
    raw: str | None = None  # the last reply, for parse errors
    error: str | None = None
    requests: int = 0
    cached: bool = False
    # with a jury or samples (servers.judge.common.jury): each member's grade, each sample's, their spread
    jury: dict[str, Any] | None = None
    sample_values: dict[str, Any] | None = None
    spread: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def of(cls, item: dict[str, Any]) -> Judgment:
        """A judgment from a combined item; a grade between two (a mean, the median of an even jury) is rounded
        to the nearest, a half down (the stricter grade, as majority ties), so qrels hold whole grades."""
        score = item.get("score")
        fields = {k: v for k, v in item.items() if k in cls.__dataclass_fields__}
        return cls(**{**fields, "score": None if score is None else math.ceil(score - 0.5)})


def umbrela_prompts(prompts: Prompts) -> tuple[Prompt, Prompt]:
    """The judging prompt and the repair prompt among the call's ``prompts`` (an override, else the built-in).
    UMBRELA asks for a grade only: the call's language adds no line to it."""
    return prompts.load(PROMPT_NAME), prompts.load(REPAIR_PROMPT_NAME)


async def judge_pairs(
    pairs: Sequence[Pair], client: LLMClient, *, prompts: Prompts, max_retries: int, progress: Progress | None = None
) -> list[Judgment]:
    """Judge every pair concurrently (the client bounds the requests in flight); results in input order."""
    prompt, repair = umbrela_prompts(prompts)
    version = f"{prompt.version}+{repair.version}"
    done = 0

    async def one(pair: Pair) -> Judgment:
        nonlocal done
        judgment = await judge_one(pair, client, prompt=prompt, repair=repair, version=version, max_retries=max_retries)
        done += 1
        if progress is not None:
            result = progress(done, len(pairs))
            if asyncio.iscoroutine(result):
                await result
        return judgment

    return list(await asyncio.gather(*(one(pair) for pair in pairs)))


async def pair_items(
    pairs: Sequence[Pair], client: LLMClient, *, prompts: Prompts, progress: Progress | None
) -> list[dict[str, Any]]:
    """``judge_pairs`` with the client's retries, as the items of the jury layer (``servers.judge.common.jury``)."""
    retries = client.settings.max_retries
    judgments = await judge_pairs(pairs, client, prompts=prompts, max_retries=retries, progress=progress)
    return [judgment.as_dict() for judgment in judgments]


async def judge_one(
    pair: Pair, client: LLMClient, *, prompt: Prompt, repair: Prompt, version: str, max_retries: int
) -> Judgment:
    """Ask for one grade; on an unreadable reply, ask again with a repair message."""
    messages = prompt.render(query=pair.query, passage=pair.passage)
    sampling = {**SAMPLING, "response_format": SCORE_SCHEMA} if client.settings.structured_output else SAMPLING
    requests, all_cached = 0, True
    for attempt in range(max_retries + 1):
        reply = await client.chat(messages, sampling, prompt=version)
        for refresh in (True, False):  # an unreadable reply from the cache is asked for again, once (ultra_llm.asking)
            requests += reply.attempts
            all_cached = all_cached and reply.cached
            base = {"qid": pair.qid, "docid": pair.docid, "rank": pair.rank, "requests": requests, "cached": all_cached}
            if reply.status != "ok":
                return Judgment(score=None, status="error", error=reply.error, **base)
            parsed = parse_grade(reply.text if reply.text.strip() else (reply.reasoning or ""))
            if parsed.score is None and reply.standin:  # ultra run --estimate: the top grade, so later steps count all
                parsed = ParsedScore(3, "estimate placeholder")
            if parsed.score is not None:
                return Judgment(score=parsed.score, status="ok", found_by=parsed.how, **base)
            if not (refresh and reply.cached):
                break
            reply = await client.chat(messages, sampling, prompt=version, refresh=True)
        if attempt == max_retries:
            reason = f"no grade after {attempt + 1} replies: {parsed.how}" + from_cache_note(client, reply)
            return Judgment(score=None, status="parse_error", raw=reply.text, error=reason, **base)
        messages = [*messages, {"role": "assistant", "content": reply.text}, *repair.render()]
    raise AssertionError("unreachable")  # pragma: no cover


PER_QUERY_COUNTS = ("num_judged", "num_excluded")  # numbers of passages: counts, never a metric (the report)


def metric_kinds(k_values: Sequence[int]) -> dict[str, str]:
    """Each per-query value's kind, written into the result file (the report charts metrics, lists counts)."""
    names = ["mean_score", *(f"{m}@{k}" for k in k_values for m in ("P", "AP")), "MRR"]
    return {**dict.fromkeys(names, "continuous"), **dict.fromkeys(PER_QUERY_COUNTS, "count")}


def query_metrics(judgments: Sequence[Judgment], k_values: Sequence[int]) -> dict[str, Any]:
    """Mean grade, P@k, AP@k and MRR of one query's ranked list, relevant = grade >= 2.

    Pairs without a grade are left out of the list (the ranks close up) and counted in
    ``num_excluded``: a failure is never read as "not relevant". P@k divides by k even when
    fewer than k were judged; AP@k is the mean of P@i over the relevant ranks i <= k (0 if none).
    """
    ranked = sorted((j for j in judgments if j.status == "ok"), key=lambda j: j.rank)
    relevant = [j.score is not None and j.score >= RELEVANT_GRADE for j in ranked]
    metrics: dict[str, Any] = {
        "mean_score": sum(j.score for j in ranked) / len(ranked) if ranked else None,  # type: ignore[misc]
        "num_judged": len(ranked),
        "num_excluded": len(judgments) - len(ranked),
    }
    for k in k_values:
        top = relevant[:k]
        metrics[f"P@{k}"] = sum(top) / k
        hits, precisions = 0, []
        for i, rel in enumerate(top, start=1):
            if rel:
                hits += 1
                precisions.append(hits / i)
        metrics[f"AP@{k}"] = sum(precisions) / len(precisions) if precisions else 0.0
    first = next((i for i, rel in enumerate(relevant, start=1) if rel), None)
    metrics["MRR"] = 1.0 / first if first else 0.0
    return metrics


def summarise(
    judgments: Sequence[Judgment], k_values: Sequence[int]
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(per-query metrics, their means over the queries that have at least one grade)."""
    by_query: dict[str, list[Judgment]] = {}
    for judgment in judgments:
        by_query.setdefault(judgment.qid, []).append(judgment)
    per_query = {qid: query_metrics(items, k_values) for qid, items in by_query.items()}
    scored = [m for m in per_query.values() if m["num_judged"]]
    names = ["mean_score", *(f"P@{k}" for k in k_values), *(f"AP@{k}" for k in k_values), "MRR"]
    aggregate: dict[str, Any] = {name: sum(m[name] for m in scored) / len(scored) if scored else None for name in names}
    aggregate["num_queries"] = len(per_query)
    aggregate["queries_without_grades"] = len(per_query) - len(scored)
    return per_query, aggregate


def count_statuses(judgments: Sequence[Judgment]) -> dict[str, int]:
    """How many pairs ended ok, as parse errors and as errors."""
    counts = {"pairs": len(judgments), "ok": 0, "parse_error": 0, "error": 0}
    for judgment in judgments:
        counts[judgment.status] += 1
    return counts


def write_qrels(path: str | os.PathLike[str], judgments: Sequence[Judgment]) -> Path:
    """Write ``qid 0 docid grade`` for every graded pair (failures are left unjudged)."""

    def write(handle: Any) -> None:
        for judgment in judgments:
            if judgment.status == "ok":
                handle.write(f"{judgment.qid} 0 {judgment.docid} {judgment.score}\n")

    return atomic_write(path, write)
