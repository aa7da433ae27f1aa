"""What the judge tools do, callable from Python without MCP: judge, summarise, write the files.

Settings are keyword-only without a default; parameter.yaml's values come with ``tool_settings``:

settings = tool_settings(run_umbrela, defaults("judge"))  # ultra_kit.factory / ultra_kit.settings
result = asyncio.run(run_umbrela(query="...", passages={"d1": "..."}, **settings))
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.judge.common import inputs
from servers.judge.common.jury import RELIABILITY, Judged, judge_items
from servers.judge.common.llm_settings import judge_settings
from servers.judge.common.overrides import call_prompts
from servers.judge.common.progress import panel_steps
from servers.judge.common.prompting import Prompt, Prompts
from servers.judge.common.scripts import WARNINGS, text_warnings
from servers.judge.relevance import agreement, umbrela
from ultra_base.errors import InputError
from ultra_kit import failures
from ultra_kit.failures import FailedSummary
from ultra_kit.files import atomic_write_json, result_path, unique_path
from ultra_kit.limits.caps import capped
from ultra_llm.cache import open_cache
from ultra_llm.settings import LLMSettings

log = logging.getLogger("ultra.judge")

MAX_INLINE_FAILURES = 50


class UmbrelaResult(TypedDict):
    result_path: str
    llm_qrels_path: str
    judged_run_path: str | None
    aggregate: dict[str, Any]
    per_query: dict[str, dict[str, Any]]
    scores: dict[str, dict[str, int | None]]
    counts: dict[str, int]
    failures: list[dict[str, Any]]
    failed: FailedSummary
    warnings: Annotated[list[str], Field(description=WARNINGS)]
    usage: dict[str, Any]
    prompt: dict[str, str]
    reliability: Annotated[dict[str, dict[str, Any]], Field(description=RELIABILITY)]


class AgreementResult(TypedDict):
    result_path: str
    num_pairs: int
    only_llm: int
    only_human: int
    exact_agreement: float
    kappa_graded: float | None
    kappa_binary: float | None
    binary_agreement: float
    confusion: dict[str, Any]
    per_grade: dict[str, dict[str, Any]]
    ranking: dict[str, Any] | None


async def run_umbrela(
    *,
    query: str | None = None,
    passages: dict[str, str] | list[str] | None = None,
    query_id: str = "q1",
    queries_path: str,
    run_path: str,
    corpus_path: str,
    depth: int,
    k_values: list[int],
    judge_llm: dict[str, Any],
    judge_cache: str,
    save_path: str,
    max_failed_fraction: float,
    prompt_file: Mapping[str, str],
    language: str,
    progress: umbrela.Progress | None = None,
    **pacing: float,
) -> UmbrelaResult:
    """``umbrela_judge`` for Python callers (``pacing``: ``backoff_base`` / ``backoff_max``, for tests;
    ``prompt_file``: the user's own UMBRELA prompts; ``language``: checked, though UMBRELA asks for a grade only;
    queries and passages not in its script give a ``warnings`` entry).

    Raises ``InputError`` and writes nothing when every pair failed, or more than ``max_failed_fraction``.
    """
    prompts = call_prompts(language, prompt_file, names=(umbrela.PROMPT_NAME, umbrela.REPAIR_PROMPT_NAME))
    failures.check_fraction(max_failed_fraction)
    capped(depth, "depth", server="judge", name="depth", minimum=1)
    k_values = list(k_values)
    if not k_values or any(not isinstance(k, int) or k < 1 for k in k_values):
        raise InputError(f"k_values must be positive integers, got {k_values!r}")
    settings = judge_settings(judge_llm, **pacing)
    if query is not None or passages is not None:
        if query is None or passages is None:
            raise InputError("inline mode needs both query and passages")
        pairs = inputs.inline_pairs(query, passages, query_id=query_id)
        judged_run = None
    else:
        pairs = inputs.file_pairs(queries_path, run_path, corpus_path, depth=depth)
        judged_run = str(run_path)
    judgments, judged = await judge_umbrela_pairs(pairs, settings, judge_cache, prompts, progress)
    failed, ok = failures.summarise((j.status, j.error) for j in judgments)
    failures.check(failed, ok, tool="umbrela_judge", noun="judgments", max_failed_fraction=max_failed_fraction)
    asked = umbrela.umbrela_prompts(prompts)
    warnings = text_warnings([*{p.qid: p.query for p in pairs}.values(), *(p.passage for p in pairs)], language)
    return _write_umbrela(
        judgments, k_values, settings, judged, judged_run, depth, save_path, judge_cache, failed, asked, warnings
    )


async def judge_umbrela_pairs(
    pairs: list[inputs.Pair],
    settings: LLMSettings,
    judge_cache: str,
    prompts: Prompts,
    progress: umbrela.Progress | None = None,
) -> tuple[list[umbrela.Judgment], Judged]:
    """UMBRELA's judgments of ``pairs`` with the call's ``prompts`` (per jury member and sample, through the cache
    and batch passes)."""
    step = panel_steps(progress, len(pairs), settings)
    cache = open_cache(judge_cache)
    try:
        judged = await judge_items(
            settings,
            cache,
            lambda client: umbrela.pair_items(pairs, client, prompts=prompts, progress=step),
            scales={"score": "ordinal"},
            tool="umbrela_judge",
            progress=progress,
        )  # fmt: skip
    finally:
        cache.close()
    return [umbrela.Judgment.of(item) for item in judged.items], judged


def _write_umbrela(
    judgments: list[umbrela.Judgment],
    k_values: list[int],
    settings: LLMSettings,
    judged: Judged,
    judged_run: str | None,
    depth: int,
    save_path: str,
    judge_cache: str,
    failed: FailedSummary,
    asked: tuple[Prompt, Prompt],
    warnings: list[str],
) -> UmbrelaResult:
    usage, dropped = judged.usage, judged.dropped
    per_query, aggregate = umbrela.summarise(judgments, k_values)
    counts = umbrela.count_statuses(judgments)
    prompt, repair = asked
    failed_items = [j.as_dict() for j in judgments if j.status != "ok"]
    scores: dict[str, dict[str, int | None]] = {}
    for judgment in judgments:
        scores.setdefault(judgment.qid, {})[judgment.docid] = judgment.score
    out = result_path(save_path, "umbrela_judge")
    qrels = unique_path(out.with_suffix(".qrels"))
    umbrela.write_qrels(qrels, judgments)
    prompt_info = {**prompt.describe(), "repair": repair.describe()["version"]}
    document = {
        "tool": "umbrela_judge",
        "aggregate": aggregate,
        "counts": counts,
        "failed": failed,
        "warnings": warnings,
        "per_query": per_query,
        "metric_kinds": umbrela.metric_kinds(k_values),
        "judgments": [j.as_dict() for j in judgments],
        "usage": usage,
        "prompt": prompt_info,
        "panel": judged.panel(settings),
        "qrels_path": str(qrels),
        "settings": {
            "judge_llm": settings.public(),
            "run_path": judged_run,
            "depth": depth if judged_run else None,
            "k_values": k_values,
            "relevant_grade": umbrela.RELEVANT_GRADE,
            "sampling": umbrela.SAMPLING,
            "dropped_parameters": dropped,
            "judge_cache": judge_cache or None,
        },
    }
    atomic_write_json(out, document)
    if counts["parse_error"] or counts["error"]:
        log.warning("umbrela_judge: %d parse errors, %d errors (see %s)", counts["parse_error"], counts["error"], out)
    return UmbrelaResult(
        result_path=str(out),
        llm_qrels_path=str(qrels),
        judged_run_path=judged_run,
        aggregate=aggregate,
        per_query=per_query,
        scores=scores,
        counts=counts,
        failures=failed_items[:MAX_INLINE_FAILURES],
        failed=failed,
        warnings=warnings,
        usage=usage,
        prompt=prompt_info,
        reliability=judged.reliability,
    )


def run_agreement(
    *,
    llm_qrels_path: str,
    human_qrels_path: str,
    run_paths: list[str],
    measure: str,
    relevant_grade: int,
    save_path: str,
) -> AgreementResult:
    """``judge_agreement`` for Python callers."""
    llm = agreement.read_qrels(llm_qrels_path)
    human = agreement.read_human(human_qrels_path)
    labels = agreement.label_agreement(llm, human, relevant_grade=relevant_grade)
    ranking = agreement.ranking_agreement(llm_qrels_path, human, run_paths, measure=measure) if run_paths else None
    out = result_path(save_path, "judge_agreement")
    document = {
        "tool": "judge_agreement",
        **labels,
        "ranking": ranking,
        "settings": {
            "llm_qrels_path": str(llm_qrels_path),
            "human_qrels_path": str(human_qrels_path),
            "run_paths": [str(p) for p in run_paths],
            "measure": measure,
        },
    }
    atomic_write_json(out, document)
    return AgreementResult(
        result_path=str(out), ranking=ranking, **{k: v for k, v in labels.items() if k != "relevant_grade"}
    )
