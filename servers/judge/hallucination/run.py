"""What ``hallucination_judge`` does, callable from Python: score with the cross-encoder, or fall back to the
LLM ``faithfulness`` judge; summarise and write ``hallucination_judge_<time>.json``.

With ``hhem_model`` set, a cross-encoder (``hallucination.hhem``) scores every (passages, answer) pair in
batches; ``hallucinated`` = score < 0.5; ``judge_llm`` is not read (its ``${VAR}`` references are not
expanded, so no key is needed). Without it, the LLM ``faithfulness`` judge runs instead (its own result
file, ``faithfulness_judge_<time>.json``), and the result and that file say so in ``method`` and ``note``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any

import anyio.from_thread
import anyio.to_thread
from pydantic import Field

from servers.judge.answers.run import AnswerJudgeResult, run_answer_judge, summarise
from servers.judge.common.progress import Progress
from servers.judge.common.scripts import language_warnings
from ultra_base.errors import InputError
from ultra_kit import failures
from ultra_kit.answered import UNANSWERED
from ultra_kit.files import atomic_write_json, result_path
from ultra_kit.languages import check_language
from ultra_kit.limits.caps import capped

THRESHOLD = 0.5  # HHEM's decision rule: below it, the answer is hallucinated
METRICS = {"factual_consistency": True, "hallucinated": False}  # metric -> higher is better
FALLBACK_NOTE = "no hhem_model is configured: scored with the LLM faithfulness judge instead of a cross-encoder"


class HallucinationResult(AnswerJudgeResult):
    """``method`` is ``hhem`` or ``llm_faithfulness``; the other fields as every answer judge returns them."""

    method: Annotated[str, Field(description="hhem (the cross-encoder) or llm_faithfulness (the fallback)")]
    note: Annotated[str, Field(description="the cross-encoder and device, or why the LLM judged instead")]


@functools.lru_cache(maxsize=2)
def _encoder(model: str, device: str) -> Any:
    from servers.judge.hallucination.hhem import load_cross_encoder

    return load_cross_encoder(model, device)


def _from_thread(progress: Progress | None) -> Callable[[int, int], None] | None:
    """``progress`` called from the scoring thread, in the event loop (the MCP progress goes out from there)."""
    if progress is None:
        return None

    async def report(done: int, total: int) -> None:
        result = progress(done, total)
        if inspect.isawaitable(result):
            await result

    return lambda done, total: anyio.from_thread.run(report, done, total)


def higher_is_better() -> dict[str, bool]:
    """The cross-encoder's metrics and their direction (``SPEC.metric_directions``)."""
    return dict(METRICS)


def score_items(
    items: list[dict[str, Any]],
    *,
    model: str,
    device: str,
    batch_size: int,
    on_batch: Callable[[int, int], None] | None = None,
) -> tuple[list, dict]:
    """Per item its ``factual_consistency`` and ``hallucinated`` (or a status saying why there is none); the model
    (``on_batch(answers scored, answers to score)`` after each forward pass)."""
    from servers.judge.hallucination.hhem import consistency_scores

    encoder = _encoder(model, device)
    todo = [
        i for i, item in enumerate(items) if item["passages"] and item["answer"].strip() and not item.get("unanswered")
    ]
    pairs = [("\n\n".join(items[i]["passages"]), items[i]["answer"]) for i in todo]
    scores = dict(zip(todo, consistency_scores(encoder, pairs, batch_size, on_batch), strict=True))
    results = []
    for i, item in enumerate(items):
        if i in scores:
            value = scores[i]
            results.append({"id": item["id"], "status": "ok", "factual_consistency": value,
                            "hallucinated": float(value < THRESHOLD)})  # fmt: skip
        else:
            status = UNANSWERED if item.get("unanswered") else "no_passages" if not item["passages"] else "no_answer"
            results.append({"id": item["id"], "status": status, "factual_consistency": None, "hallucinated": None})
    return results, {"hhem_model": model, "batch_size": batch_size, **encoder.describe()}


async def run_hallucination(
    items: list[dict[str, Any]],
    *,
    hhem_model: str,
    hhem_batch_size: int,
    hhem_device: str,
    judge_llm: dict[str, Any],
    judge_cache: str,
    save_path: str,
    max_failed_fraction: float,
    language: str,
    progress: Progress | None = None,
) -> HallucinationResult:
    """``hallucination_judge`` for Python callers: ``items`` as ``answers.run.build_items`` makes them
    (``language``: the LLM fallback's; ``progress(done, total)``: per answer judged by the LLM fallback, or scored
    by the cross-encoder)."""
    check_language(language)  # whichever way the items are scored
    # pairs held in one forward pass: the memory of the pass grows with them
    capped(hhem_batch_size, "hhem_batch_size", server="judge", name="hhem_batch_size", minimum=1)
    if not hhem_model:
        method = {"method": "llm_faithfulness", "note": FALLBACK_NOTE}
        result = await run_answer_judge(
            "faithfulness", items, judge_llm=judge_llm, judge_cache=judge_cache, save_path=save_path,
            max_failed_fraction=max_failed_fraction, prompt_file={}, language=language, recorded=method,
            progress=progress,
        )  # fmt: skip
        return {**method, **result}
    scoring = functools.partial(score_items, items, model=hhem_model, device=hhem_device, batch_size=hhem_batch_size,
                                on_batch=_from_thread(progress))  # fmt: skip
    results, model = await anyio.to_thread.run_sync(scoring)
    if not any(r["status"] == "ok" for r in results):
        raise InputError("hallucination_judge: no item has both an answer and passages; nothing was scored")
    aggregate = summarise(tuple(METRICS), results)
    counts: dict[str, int] = {"items": len(results)}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    failed, _ = failures.summarise((r["status"], None) for r in results)
    note = f"cross-encoder {hhem_model} on {model['device']}"
    out = result_path(save_path, "hallucination_judge")
    document = {"tool": "hallucination_judge", "method": "hhem", "note": note, "aggregate": aggregate,
                "higher_is_better": METRICS, "counts": counts, "failed": failed, "items": results,
                "model": model}  # fmt: skip
    atomic_write_json(out, document)
    return {"method": "hhem", "note": note, "result_path": str(out), "aggregate": aggregate, "items": results,
            "counts": counts, "failed": failed, "warnings": language_warnings(items, language), "usage": {},
            "prompt": {}, "reliability": {}}  # fmt: skip
