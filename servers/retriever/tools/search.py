"""``retriever_search``: the top passages of each query from the saved index, also written as a TREC run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field
from typing_extensions import TypedDict

from servers.retriever.parameters import Backend, Bm25Options, DenseOptions, IndexPath
from ultra_kit.factory import tool_hints

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


class SearchInfo(TypedDict):
    backend: str
    top_k: int
    queries: int
    queries_without_results: int
    queries_with_fewer_than_top_k: int
    seconds: float


class SearchResult(TypedDict):
    ret_psg: list[list[str]]
    ret_ids: list[list[str]]
    ret_scores: list[list[float]]
    run_path: str
    search_info: SearchInfo


@tool_hints(read_only=False, idempotent=True)
async def retriever_search(
    q_ls: Annotated[list[str], Field(description="the queries")],
    id_ls: Annotated[list[str] | None, Field(description="query ids for the run file (default q1..qN)")] = None,
    *,
    backend: Backend,
    index_path: IndexPath,
    top_k: Annotated[int, Field(description="passages per query; fewer when fewer match", ge=1)],
    bm25: Bm25Options,
    dense: DenseOptions,
    save_path: Annotated[str, Field(description="folder (file retriever_search_<timestamp>.trec) or file name")],
    run_tag: Annotated[str, Field(description="the run's tag column")],
    ctx: Context | None = None,
) -> SearchResult:
    """Retrieve the top_k passages of each query from the saved index and write them as a TREC run file.

    Returns ret_psg (passage texts), ret_ids and ret_scores per query, best first, and run_path:
    the same rankings as `qid Q0 docid rank score tag` lines, which evaluation.evaluate_trec scores.
    Passages that do not match (BM25 score 0) are left out, never used as padding.
    """
    from servers.retriever.searching import run_search

    options = {"backend": backend, "index_path": index_path, "top_k": top_k, "bm25": bm25, "dense": dense}
    return await run_search(q_ls, id_ls, **options, save_path=save_path, run_tag=run_tag, ctx=ctx)  # type: ignore[return-value]


TOOLS = [retriever_search]
