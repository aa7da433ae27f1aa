"""Run one answer judge over a list of items: ask, summarise, write ``<kind>_judge_<time>.json``.

result = asyncio.run(run_answer_judge("idk", build_items(q_ls, pred_ls), judge_llm={...}, judge_cache="",
                                      save_path="output/judge", max_failed_fraction=0.1, prompt_file={},
                                      language="en"))

When every item that needed the LLM failed, or more than ``max_failed_fraction`` of them, it raises
``InputError`` (see ``failures``) and writes nothing. With structured output (``judge_llm.structured_output``,
always on with the local backend) each request carries its prompt's reply schema (the judge's ``replies``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.judge.answers.declare import AnswerJudge
from servers.judge.answers.recorded import recorded_results
from servers.judge.answers.registry import judge_of_kind
from servers.judge.common.jury import RELIABILITY, judge_items
from servers.judge.common.llm_settings import judge_settings
from servers.judge.common.overrides import call_prompts, prompts_recorded
from servers.judge.common.progress import Progress, panel_steps, ticked
from servers.judge.common.prompting import Prompts
from servers.judge.common.scripts import WARNINGS, language_warnings
from ultra_base.errors import InputError
from ultra_kit import failures
from ultra_kit.answered import UNANSWERED
from ultra_kit.failures import FailedSummary
from ultra_kit.files import atomic_write_json, result_path
from ultra_llm.cache import open_cache


class AnswerJudgeResult(TypedDict):
    """What every answer judge returns (its result file holds the same, with the settings)."""

    result_path: Annotated[str, Field(description="the result file (KIND_judge_TIME.json)")]
    aggregate: Annotated[
        dict[str, Any],
        Field(
            description="per metric its mean over the items with status ok and a value, and num_METRIC (how many); "
            "num_items, num_excluded (items not ok)"
        ),
    ]
    items: Annotated[
        list[dict[str, Any]],
        Field(
            description="per item: id, status (ok / parse_error / error / unanswered: pred_ls None, never judged / "
            "a 'nothing to judge' status), requests, "
            "cached, the judge's values; error and raw (the last reply) when it failed"
        ),
    ]
    counts: Annotated[dict[str, int], Field(description="items, and the number of items per status")]
    failed: FailedSummary
    warnings: Annotated[list[str], Field(description=WARNINGS)]
    usage: Annotated[
        dict[str, Any], Field(description="requests, cache hits, errors and tokens of this call (cached ones apart)")
    ]
    prompt: Annotated[
        dict[str, str], Field(description="the first prompt file: name, sha256 and version (name@hash); {} for none")
    ]
    reliability: Annotated[dict[str, dict[str, Any]], Field(description=RELIABILITY)]


def build_items(
    q_ls: list[str],
    pred_ls: list[str | None],
    *,
    ret_psg: list[list[str]] | None = None,
    gt_ls: list[Any] | None = None,
    id_ls: list[str] | None = None,
    need_passages: bool = False,
    need_reference: bool = False,
) -> list[dict[str, Any]]:
    """One item per question: the question, the answer, and the passages / reference when the judge needs them.

    An answer that is None (``target.ask``: the system failed) makes an ``unanswered`` item: never judged.
    """
    n = len(q_ls)
    lists = {"pred_ls": pred_ls, "ret_psg": ret_psg, "gt_ls": gt_ls, "id_ls": id_ls}
    for name, values in lists.items():
        if values is not None and len(values) != n:
            raise InputError(f"{name} has {len(values)} items but q_ls has {n}: give one per question")
    if need_passages and ret_psg is None:
        raise InputError("ret_psg (the passages shown to the generator, one list per question) is needed")
    if need_reference and gt_ls is None:
        raise InputError("gt_ls (the reference answers, one per question) is needed")
    items = []
    for i in range(n):
        reference = gt_ls[i] if gt_ls is not None else ""
        if isinstance(reference, list):
            reference = reference[0] if reference else ""
        items.append(
            {
                "id": str(id_ls[i]) if id_ls is not None else str(i),
                "question": str(q_ls[i]),
                "answer": str(pred_ls[i] or ""),
                "passages": [str(p) for p in (ret_psg[i] if ret_psg is not None else [])],
                "reference": str(reference),
                **({"unanswered": True} if pred_ls[i] is None else {}),
            }
        )
    return items


def items_for(judge: AnswerJudge, lists: dict[str, Any], id_ls: list[str] | None) -> list[dict[str, Any]]:
    """The items of ``judge`` from its input lists (a judge without ``pred_ls`` judges no answer)."""
    q_ls = lists["q_ls"]
    return build_items(
        q_ls,
        lists["pred_ls"] if "pred_ls" in judge.inputs else [""] * len(q_ls),
        ret_psg=lists.get("ret_psg"),
        gt_ls=lists.get("gt_ls"),
        id_ls=id_ls,
        need_passages="ret_psg" in judge.inputs,
        need_reference="gt_ls" in judge.inputs,
    )


async def run_answer_judge(
    judge: AnswerJudge | str,
    items: list[dict[str, Any]],
    *,
    judge_llm: dict[str, Any],
    judge_cache: str,
    save_path: str,
    max_failed_fraction: float,
    prompt_file: Mapping[str, str],
    language: str,
    recorded: dict[str, Any] | None = None,
    progress: Progress | None = None,
    replay: str | None = None,
    **pacing: float,
) -> AnswerJudgeResult:
    """Judge every item with ``judge`` (or the judge of that kind), summarise and write the result file.

    ``prompt_file``: the user's own versions of the judge's prompts ({prompt name: file}; ``common.overrides``),
    ``language``: the items' language; both recorded in the result file, then ``recorded``: more fields for it
    (a caller's ``method`` and ``note``); ``progress(done, total)``: one step per item judged by each member and
    sample; ``replay``: a file of judgments made earlier (the ``recorded_judgments`` setting), read instead of
    asking ``judge_llm`` (``answers.recorded``).
    """
    judge = judge_of_kind(judge) if isinstance(judge, str) else judge
    prompts = call_prompts(language, prompt_file, names=judge.prompts)
    recorded = {**prompts_recorded(prompts, prompt_file), **(recorded or {})}
    failures.check_fraction(max_failed_fraction)
    if replay:
        results, panel = recorded_results(judge, items, replay), {}
        usage = {"requests": 0, "recorded": replay}  # the cost table's model column says "recorded"
        used: dict[str, Any] = {"recorded_judgments": replay}  # no LLM, no cache
        reliability: dict[str, dict[str, Any]] = {}
    else:
        settings = judge_settings(offline(judge_llm) if judge.offline else judge_llm, **pacing)
        step = panel_steps(progress, len(items), settings)
        cache = open_cache(judge_cache)
        try:
            judged = await judge_items(
                settings,
                cache,
                lambda client: asyncio.gather(*(ticked(step, _judged(judge, client, prompts, item)) for item in items)),
                scales=judge.levels,
                tool=judge.name,
                progress=progress,
            )
        finally:
            cache.close()
        usage, panel, reliability = judged.usage, judged.panel(settings), judged.reliability
        used = {"judge_llm": settings.public()}
        results = [{"id": item["id"], **result} for item, result in zip(items, judged.items, strict=True)]
    aggregate = summarise(judge.metrics, results)
    counts: dict[str, int] = {"items": len(results)}
    for result in results:
        counts[result["status"]] = counts.get(result["status"], 0) + 1
    failed, ok = failures.summarise((r["status"], r.get("error")) for r in results)
    failures.check(failed, ok, tool=judge.name, noun="judgments", max_failed_fraction=max_failed_fraction)
    prompt = prompts.load(judge.prompts[0]).describe() if judge.prompts else {}  # a classifier has no prompt
    warnings = language_warnings(items, language)
    out = result_path(save_path, f"{judge.kind}_judge")
    document = {
        "tool": f"{judge.kind}_judge",
        **recorded,
        "aggregate": aggregate,
        "metric_kinds": judge.metric_kinds,
        "higher_is_better": judge.higher_is_better,  # compare's better / worse per metric
        "counts": counts,
        "failed": failed,
        "warnings": warnings,
        "items": results,
        "usage": usage,
        "prompt": prompt,
        "panel": panel,
        "settings": used,
    }
    atomic_write_json(out, document)
    return AnswerJudgeResult(
        result_path=str(out),
        aggregate=aggregate,
        items=results,
        counts=counts,
        failed=failed,
        warnings=warnings,
        usage=usage,
        prompt=prompt,
        reliability=reliability,
    )


async def _judged(judge: AnswerJudge, client: Any, prompts: Prompts, item: dict[str, Any]) -> dict[str, Any]:
    """``item`` judged, or its ``unanswered`` status (no request: the system under test failed on it)."""
    if item.get("unanswered"):
        return {"status": UNANSWERED, "requests": 0, "cached": False}
    return await judge.judge(client, prompts, item, client.settings.max_retries)


def offline(judge_llm: dict[str, Any]) -> dict[str, Any]:
    """``judge_llm`` of a judge that sends no request: no key, no jury, one sample."""
    return {**judge_llm, "api_key": "", "jury": [], "samples": 1}


def summarise(metrics: Sequence[str], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each metric's mean over the items with status ok (and a value), with the number excluded."""
    ok = [r for r in results if r["status"] == "ok"]
    aggregate: dict[str, Any] = {}
    for name in metrics:
        values = [r[name] for r in ok if r.get(name) is not None]
        aggregate[name] = sum(values) / len(values) if values else None
        aggregate[f"num_{name}"] = len(values)
    aggregate["num_items"] = len(results)
    aggregate["num_excluded"] = len(results) - len(ok)
    return aggregate
