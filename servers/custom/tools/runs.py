"""``rankings_to_run``: a TREC run from the rankings of each item, for evaluate_trec."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import TypedDict

from servers.custom.runs import rankings_run
from ultra_kit.factory import tool_hints


class RunInfo(TypedDict):
    queries: int
    queries_without_ranking: list[str]
    scored_by_rank: int
    dropped_docids: int


class RankingsRunResult(TypedDict):
    run: dict[str, dict[str, float]]
    run_info: RunInfo


@tool_hints(read_only=True, idempotent=True)
def rankings_to_run(
    id_ls: Annotated[list[str], Field(description="the query id of each item (e.g. get_data's trace ids)")],
    ret_ids: Annotated[list[list[str]], Field(description="each item's ranked docids, best first")],
    ret_scores: Annotated[
        list[list[float | None]] | None, Field(description="each item's scores, aligned with ret_ids (optional)")
    ] = None,
) -> RankingsRunResult:
    """The run {qid: {docid: score}} of the items' rankings, so evaluate_trec scores them in a pipeline.

    A score is the recorded one when every docid of the item has one, else n - rank (order kept).
    Empty and repeated docids are dropped; items with no ranking are left out and listed.
    """
    made = rankings_run(id_ls, ret_ids, ret_scores)
    info: RunInfo = {
        "queries": len(made.run),
        "queries_without_ranking": made.without_ranking,
        "scored_by_rank": made.scored_by_rank,
        "dropped_docids": made.dropped_docids,
    }
    return {"run": made.run, "run_info": info}


TOOLS = [rankings_to_run]
