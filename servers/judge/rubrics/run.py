"""Run rubric judges over items: steps (declared, or generated once per rubric), one request per (item, rubric).

result = asyncio.run(run_rubric_judge(rubrics, items, judge_llm={...}, judge_cache="", save_path="output/judge",
                                      max_failed_fraction=0.1, top_logprobs=5, source="...", language="en"))

Each judgment asks ``rubric_judge_v1`` for ``{reasoning, score}`` under the scale's schema (sent as
``response_format`` with structured output; read by the same reader otherwise). With ``top_logprobs`` > 0
the request asks for token log-probabilities, and an ok judgment also gets ``weighted`` (``weighting``) or
``weighted: null`` with ``weighted_reason``. Judgments are counted as units (an item judged on 3 rubrics is
3); failures are counted, never scored; more than ``max_failed_fraction`` of them fails the tool, writing
nothing. The result file ``rubric_judge_<time>.json`` records each rubric's declaration, text and sha256.

Juries and samples (``judge_llm.jury``, ``judge_llm.samples``) go through the judge's jury layer (``panel``):
the steps are generated once, by the first member, and every member and sample judges every (item, rubric);
the result keeps each member's value, ``panel`` and ``reliability`` per rubric. ``language`` (the items') is
asked in and recorded; questions and answers mostly not in its script give a ``warnings`` entry.
"""

from __future__ import annotations

import asyncio
from typing import Any

from servers.judge.answers.common import status_fields
from servers.judge.common.asking import SAMPLING, Answer, ask
from servers.judge.common.llm_settings import judge_settings
from servers.judge.common.progress import Progress, panel_steps, ticked
from servers.judge.common.prompting import Prompts
from servers.judge.common.scripts import language_warnings
from servers.judge.rubrics import prompt as rubric_prompt
from servers.judge.rubrics.declaration import Rubric
from servers.judge.rubrics.panel import judge_units
from servers.judge.rubrics.weighting import weighted_score
from ultra_kit import failures
from ultra_kit.answered import UNANSWERED
from ultra_kit.files import atomic_write_json, result_path
from ultra_kit.limits.caps import capped
from ultra_llm.batch_mode.passes import in_passes
from ultra_llm.cache import open_cache
from ultra_llm.client import LLMClient
from ultra_llm.panel import sum_usage

TOOL = "rubric_judge"


async def run_rubric_judge(
    rubrics: list[Rubric],
    items: list[dict[str, Any]],
    *,
    judge_llm: dict[str, Any],
    judge_cache: str,
    save_path: str,
    max_failed_fraction: float,
    top_logprobs: int,
    source: str,
    language: str,
    progress: Progress | None = None,
    **pacing: float,
) -> dict[str, Any]:
    """Judge every item on every rubric, summarise, write the result file; its content is returned
    (``progress(done, total)``: one step per (item, rubric) judged by each member and sample)."""
    prompts = Prompts(language, {})  # a rubric is the user's own text already: no prompt_file
    failures.check_fraction(max_failed_fraction)
    # alternatives returned with every token of every reply (OpenAI allows at most 20)
    capped(top_logprobs, "rubric_top_logprobs", server="judge", name="top_logprobs")
    settings = judge_settings(judge_llm, **pacing)
    counter = panel_steps(progress, len(items) * len(rubrics), settings)
    sampling = {**SAMPLING, "logprobs": True, "top_logprobs": top_logprobs} if top_logprobs else SAMPLING
    cache = open_cache(judge_cache)
    try:  # the steps once, by the first member (sample 0); then every member and sample judges the units
        async with LLMClient(settings.members()[0], cache) as client:
            retries = client.settings.max_retries
            steps = await in_passes(
                client, lambda: asyncio.gather(*(rubric_steps(client, prompts, rubric, retries) for rubric in rubrics))
            )
            steps_usage = client.usage.as_dict()
        judged, panel = await judge_units(
            settings, cache, rubrics, steps, items,
            lambda client, rubric, step, item: ticked(counter, judge_one(
                client, prompts, rubric, step, item, client.settings.max_retries, sampling)),
        )  # fmt: skip
    finally:
        cache.close()
    usage = sum_usage([steps_usage, panel.usage])
    results = [item_result(item["id"], rubrics, judgments) for item, judgments in zip(items, judged, strict=True)]
    units = [(j["status"], j.get("error")) for r in results for j in r["rubrics"].values()]
    failed, ok = failures.summarise(units)
    failures.check(failed, ok, tool=TOOL, noun="judgments", max_failed_fraction=max_failed_fraction)
    document = {
        "tool": TOOL,
        "aggregate": aggregate(rubrics, results),
        "weighted": {r.name: mean_of(results, r.name, "weighted") for r in rubrics},
        "counts": counts(results),
        "failed": failed,
        "warnings": language_warnings(items, language),
        "rubrics": [described(rubric, found) for rubric, found in zip(rubrics, steps, strict=True)],
        "metric_kinds": {rubric.name: rubric.scale.kind for rubric in rubrics},  # the report's chart per rubric
        "source": source,
        "items": results,
        "usage": usage,
        "prompt": prompts.load(rubric_prompt.JUDGE_PROMPT).describe(),
        "language": prompts.language,
        "panel": panel.panel(settings),
        "reliability": panel.reliability,
        "settings": {"judge_llm": settings.public(), "rubric_top_logprobs": top_logprobs,
                     "dropped_parameters": panel.dropped},
    }  # fmt: skip
    out = result_path(save_path, TOOL)
    atomic_write_json(out, document)
    return {"result_path": str(out), **document}


async def rubric_steps(client: LLMClient, prompts: Prompts, rubric: Rubric, retries: int) -> dict[str, Any]:
    """The rubric's steps: as declared, or generated by one (cached) request; with how they came."""
    if rubric.steps is not None:
        return {"steps": list(rubric.steps), "generated": False, "status": "ok"}
    values = rubric_prompt.steps_values(rubric)
    answer = await ask(client, prompts, rubric_prompt.STEPS_PROMPT, rubric_prompt.STEPS, max_retries=retries, **values)
    if answer.status != "ok" or not answer.value["steps"]:
        error = answer.error or "the reply listed no steps"
        return {"steps": None, "generated": True, "status": answer.status, "error": error, "raw": answer.raw}
    unreadable = rubric_prompt.unreadable_steps(answer.value["steps"])
    if unreadable:
        return {"steps": None, "generated": True, "status": "parse_error", "raw": answer.raw,
                "error": f"the generated steps are not a list of instructions: {unreadable}"}  # fmt: skip
    return {"steps": answer.value["steps"], "generated": True, "status": "ok", "requests": answer.requests}


async def judge_one(
    client: LLMClient,
    prompts: Prompts,
    rubric: Rubric,
    steps: dict[str, Any],
    item: dict[str, Any],
    retries: int,
    sampling: dict[str, Any],
) -> dict[str, Any]:
    """One (item, rubric) judgment: its status, score, value, reasoning and weighted score."""
    if item.get("unanswered"):  # the system under test failed on it (pred_ls None): never judged
        return {"status": UNANSWERED, "requests": 0, "cached": False}
    if steps["steps"] is None:
        status = steps["status"] if steps["status"] in ("error", "parse_error") else "error"
        return {"status": status, "requests": 0, "cached": True, "error": f"no steps: {steps['error']}"}
    values = rubric_prompt.judge_values(rubric, tuple(steps["steps"]), item)
    reply = rubric.scale.reply()
    answer: Answer = await ask(
        client, prompts, rubric_prompt.JUDGE_PROMPT, reply, max_retries=retries, sampling=sampling, **values
    )  # fmt: skip
    result = status_fields(answer)
    if answer.status != "ok":
        return result
    score = answer.value["score"]
    result.update(score=score, value=rubric.scale.values[score], reasoning=answer.value["reasoning"])
    if sampling.get("logprobs"):
        completion = answer.completion
        text, logprobs = (completion.text, completion.logprobs) if completion is not None else ("", None)
        weighted, reason = weighted_score(text, logprobs, rubric.scale)
        result["weighted"] = weighted
        if reason is not None:
            result["weighted_reason"] = reason
    return result


def item_result(item_id: str, rubrics: list[Rubric], judgments: list[dict[str, Any]]) -> dict[str, Any]:
    """An item: ok when every rubric judged it, its one failure's status, or ``incomplete``; a value per rubric."""
    statuses = [j["status"] for j in judgments]
    if all(s == "ok" for s in statuses):
        status = "ok"
    elif any(s == "ok" for s in statuses) or len(set(statuses)) > 1:
        status = "incomplete"
    else:
        status = statuses[0]
    result: dict[str, Any] = {"id": item_id, "status": status}
    result["requests"] = sum(j.get("requests", 0) for j in judgments)
    result["cached"] = all(j.get("cached", True) for j in judgments)
    result.update({r.name: j.get("value") for r, j in zip(rubrics, judgments, strict=True)})
    for key in ("sample_values", "spread"):  # repeated judging (judge_llm.samples): per rubric, as other judges'
        if any(key in j for j in judgments):
            result[key] = {r.name: j.pop(key, None) for r, j in zip(rubrics, judgments, strict=True)}
    result["rubrics"] = {r.name: j for r, j in zip(rubrics, judgments, strict=True)}
    return result


def mean_of(results: list[dict[str, Any]], name: str, field: str) -> float | None:
    """The mean of one rubric's ``field`` over its ok judgments that have one (None when none has)."""
    values = [j[field] for r in results if (j := r["rubrics"][name])["status"] == "ok" and j.get(field) is not None]
    return sum(values) / len(values) if values else None


def aggregate(rubrics: list[Rubric], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per rubric: its mean value over its ok judgments and ``num_<name>``; ``num_items``, ``num_excluded``."""
    summary: dict[str, Any] = {}
    for rubric in rubrics:
        summary[rubric.name] = mean_of(results, rubric.name, "value")
        summary[f"num_{rubric.name}"] = sum(r["rubrics"][rubric.name]["status"] == "ok" for r in results)
    summary["num_items"] = len(results)
    summary["num_excluded"] = sum(r["status"] != "ok" for r in results)
    return summary


def counts(results: list[dict[str, Any]]) -> dict[str, int]:
    tally: dict[str, int] = {"items": len(results)}
    for result in results:
        tally[result["status"]] = tally.get(result["status"], 0) + 1
    return tally


def described(rubric: Rubric, steps: dict[str, Any]) -> dict[str, Any]:
    """What the result records of a rubric: its declaration, text and sha256, and the steps it was judged by."""
    record = {
        "name": rubric.name,
        "declared": rubric.declared,
        "text": rubric.text,
        "sha256": rubric.sha256,
        "scale": rubric.scale.declared(),
        "inputs": list(rubric.inputs),
        "steps": steps["steps"],
        "steps_generated": steps["generated"],
    }
    if steps["status"] != "ok":
        record["steps_error"] = steps["error"]
    return record
