"""The ``hallucination_judge`` tool: a thin face over ``hallucination.run.run_hallucination``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from servers.judge.answers.run import build_items
from servers.judge.common.parameters import INPUT_TYPES, CachePath, FailedFraction, Ids, LLMSpec, SavePath
from servers.judge.common.progress import reporter
from servers.judge.common.prompting import LanguageParam
from servers.judge.hallucination.run import HallucinationResult, run_hallucination
from ultra_kit.factory import expands_own_env, tool_hints

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

Questions, Answers, Passages = (INPUT_TYPES[name] for name in ("q_ls", "pred_ls", "ret_psg"))


@tool_hints(read_only=False, idempotent=True, open_world=True)
@expands_own_env("judge_llm")  # only the LLM fallback reads it: with hhem_model no key is needed
async def hallucination_judge(
    *,
    q_ls: Questions,
    pred_ls: Answers,
    ret_psg: Passages,
    id_ls: Ids = None,
    hhem_model: Annotated[
        str, Field(description="cross-encoder folder or model id ('' = fall back to the LLM faithfulness judge)")
    ],
    hhem_batch_size: Annotated[int, Field(description="pairs per forward pass (at most caps.hhem_batch_size)", ge=1)],
    hhem_device: Annotated[str, Field(description="auto (cuda when available) | cpu | cuda | cuda:N")],
    judge_llm: LLMSpec,
    judge_cache: CachePath,
    save_path: SavePath,
    max_failed_fraction: FailedFraction,
    language: LanguageParam,
    ctx: Context | None = None,
) -> HallucinationResult:
    """Hallucination (HHEM-style): a cross-encoder's factual-consistency score (0-1) of each answer with its passages.

    The passages (joined) are the premise, the answer the hypothesis; batched, on CPU or GPU; `hallucinated` =
    score < 0.5; aggregate: mean score and hallucination rate. Items without passages or answer are not scored.
    Without hhem_model the LLM faithfulness judge runs instead (method llm_faithfulness, note says so).
    """
    items = build_items(q_ls, pred_ls, ret_psg=ret_psg, id_ls=id_ls, need_passages=True)
    return await run_hallucination(
        items, hhem_model=hhem_model, hhem_batch_size=hhem_batch_size, hhem_device=hhem_device, judge_llm=judge_llm,
        judge_cache=judge_cache, save_path=save_path, max_failed_fraction=max_failed_fraction, language=language,
        progress=reporter(ctx, "answers"),
    )  # fmt: skip


TOOLS = [hallucination_judge]
