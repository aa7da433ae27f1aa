"""``target.ask``: every question to the system under test; its answers, passages, run, latency and failures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.target.asking import ask as ask_all
from servers.target.kinds import PINNED_KEYS
from servers.target.records.failures import FailedSummary
from ultra_kit.factory import tool_hints
from ultra_kit.wrapping.pinned import pinned

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


class Latency(TypedDict):
    """Seconds per answered item (the attempt that answered; cached replies left out); None without any."""

    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None
    mean: float | None
    max: float | None
    count: int


class TargetInfo(TypedDict):
    kind: str
    items: int
    answered: int
    resumed: int  # answers read back from an interrupted run's journal
    cached: int  # answers read from target_cache
    empty: int
    too_long: int
    requests: int  # requests sent, retries included
    seconds: float


class TargetUsage(TypedDict):
    """What this call sent: the cost table's row (cost unknown: the system under test is yours, docs/cost.md)."""

    requests: int  # requests sent, retries included (resumed and cached items sent none)
    cache_hits: int  # replies read from target_cache
    prompt_tokens: int  # as the system reported them (0 when it reports none)
    completion_tokens: int
    items_with_tokens: int  # the items whose reply carried token usage
    system_under_test: str  # the kind


class AskResult(TypedDict):
    pred_ls: list[str | None]
    ret_psg: list[list[str]]
    ret_ids: list[list[str]]
    answered_id_ls: list[str]
    run_path: str
    latency: Latency
    failed: FailedSummary
    result_path: str
    target_info: TargetInfo
    usage: TargetUsage


@tool_hints(read_only=False, idempotent=False, open_world=True)
@pinned("target", PINNED_KEYS)
async def ask(
    q_ls: Annotated[list[Any], Field(description="the questions: text, or MT-RAG turns [{speaker, text}, ...]")],
    id_ls: Annotated[
        list[Any] | None, Field(description="item ids (default: positions); MT-RAG ids group turns")
    ] = None,
    conv_ls: Annotated[
        list[Any] | None, Field(description="a conversation id per item: its turns are asked in order")
    ] = None,
    gt_ls: Annotated[list[Any] | None, Field(description="reference answers (for target.history: reference)")] = None,
    *,
    target: Annotated[dict[str, Any], Field(description="the system under test: kind and its keys (docs/targets.md)")],
    save_path: Annotated[str, Field(description="folder (ask_<timestamp>.jsonl and .trec) or a .jsonl file name")],
    ctx: Context | None = None,
) -> AskResult:
    """Ask the system under test every question (turn by turn within a conversation) and keep what it answered.

    pred_ls holds the answers aligned with q_ls, None for an item that failed (never scored: evaluate and the
    judges skip and count it); ret_psg and ret_ids its passages and their ids; run_path a TREC run of those
    ids by rank (for evaluate_trec); latency the p50/p90/p95/p99/mean/max seconds; result_path one record per
    item (answer, passages, citations, usage, latency, status ok or error with its reason). A killed run asks
    only the missing items when run again. More than target.max_failed_fraction failed fails the step.
    """

    async def on_done(done: int, total: int) -> None:
        if ctx is not None:
            await ctx.report_progress(done, total, f"asked {done}/{total}")

    return await ask_all(q_ls, id_ls, conv_ls, gt_ls, target=target, save_path=save_path, on_done=on_done)  # type: ignore[return-value]


TOOLS = [ask]
