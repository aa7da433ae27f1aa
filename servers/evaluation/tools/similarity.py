"""``semantic_similarity``: the cosine between each answer's and its reference's embeddings (``answers.similarity``)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from servers.evaluation.answers.similarity import semantic_similarities
from servers.evaluation.results import EvaluateResult, SavePathParam, item_ids
from ultra_base.errors import InputError
from ultra_kit.answered import answered_items
from ultra_kit.factory import __version__, tool_hints
from ultra_kit.files import atomic_write_json, result_path
from ultra_kit.llm_mapping import llm_mapping_description

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def semantic_similarity(
    *,
    pred_ls: Annotated[
        list[str | None], Field(description="answers, one per item; None = the system failed (skipped, counted)")
    ],
    gt_ls: Annotated[list[str | list[str]], Field(description="reference answers: a string or a list per item")],
    id_ls: Annotated[list[Any] | None, Field(description="item ids (default: positions 0..n-1)")] = None,
    similarity_embeddings: Annotated[dict[str, Any], Field(description=llm_mapping_description())],
    save_path: SavePathParam,
    ctx: Context | None = None,
) -> EvaluateResult:
    """Cosine similarity between each answer's and its reference's embeddings (RAGAS semantic_similarity, no threshold).

    Local all-MiniLM-L6-v2 by default (offline), or an OpenAI-compatible embeddings endpoint. Several references:
    the maximum. An empty answer or reference has no value (None, counted in num_empty, not in the mean).
    Returns eval_res {semantic_similarity: [per item], avg_semantic_similarity, num_empty} and writes it with id_ls.
    An item whose answer is None (target.ask: the system failed) is left out and listed in settings.failed_items.
    """
    if not pred_ls:
        raise InputError("pred_ls is empty: there is nothing to evaluate")
    pred_ls, kept, failed = answered_items(pred_ls, gt_ls=gt_ls, id_ls=id_ls)
    gt_ls = kept["gt_ls"]
    ids = item_ids(kept["id_ls"], len(pred_ls))
    progress = None if ctx is None else functools.partial(_report, ctx)
    values, embeddings = await semantic_similarities(
        pred_ls, gt_ls, similarity_embeddings=similarity_embeddings, progress=progress
    )
    present = [v for v in values if v is not None]
    eval_res = {
        "semantic_similarity": values,
        "avg_semantic_similarity": sum(present) / len(present) if present else None,
        "num_empty": len(values) - len(present),
    }
    settings = {"similarity_embeddings": embeddings, "n_items": len(values), "failed_items": failed}
    path = result_path(save_path, "semantic_similarity")
    atomic_write_json(path, {"id_ls": ids, **eval_res, "settings": settings, "versions": {"ultra-eval": __version__}})
    return {"eval_res": eval_res, "settings": settings, "result_path": str(path)}


async def _report(ctx: Context, done: int, total: int) -> None:
    await ctx.report_progress(done, total, f"embedded {done}/{total} texts")


TOOLS = [semantic_similarity]
