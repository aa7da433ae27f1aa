"""``retriever_search``: the top passages of each query from the saved index, also written as a TREC run."""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Annotated

from pydantic import Field
from typing_extensions import TypedDict

from servers.retriever import bm25 as bm25_backend
from servers.retriever import dense as dense_backend
from servers.retriever.index import open_index
from servers.retriever.parameters import Backend, Bm25Options, DenseOptions, IndexPath, backend_options
from servers.retriever.progress import context_progress
from servers.retriever.ranking import query_ids, run_lines, write_run
from ultra_base.errors import InputError
from ultra_kit.factory import tool_hints
from ultra_kit.files import result_path

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
    import anyio.to_thread

    started = time.perf_counter()
    if top_k < 1:
        raise InputError(f"top_k must be >= 1, got {top_k}")
    qids = query_ids(id_ls, len(q_ls))
    options = backend_options(backend=backend, bm25=bm25, dense=dense)
    index = await anyio.to_thread.run_sync(functools.partial(open_index, index_path=index_path, backend=backend))
    if backend == "dense" and index.meta.get("settings") != dense_backend.identity(options):
        raise InputError(
            f"the dense index in {index.folder} was built with {index.meta.get('settings')}, but the dense setting "
            f"is {dense_backend.identity(options)}; run retriever_index first"
        )
    report = context_progress(ctx)
    report(0, len(q_ls), "searching")
    if backend == "bm25":
        stop = index.meta["settings"]["stopwords"]
        search = functools.partial(bm25_backend.search, top_k=top_k, stopwords=stop)
        rankings = await anyio.to_thread.run_sync(search, index.model, q_ls, index.doc_ids)
    else:
        vectors = await dense_backend.embed([options["query_instruction"] + q for q in q_ls], options)
        search = functools.partial(dense_backend.search, top_k=top_k)
        rankings = await anyio.to_thread.run_sync(search, index.model, vectors, index.doc_ids)
    report(len(q_ls), len(q_ls), "writing the run file")
    run_file = write_run(result_path(save_path, "retriever_search", ".trec"), run_lines(qids, rankings, run_tag))
    info: SearchInfo = {
        "backend": backend,
        "top_k": top_k,
        "queries": len(q_ls),
        "queries_without_results": sum(not hits for hits in rankings),
        "queries_with_fewer_than_top_k": sum(0 < len(hits) < top_k for hits in rankings),
        "seconds": round(time.perf_counter() - started, 3),
    }
    return {
        "ret_psg": [[index.texts[h.index] for h in hits] for hits in rankings],
        "ret_ids": [[h.doc_id for h in hits] for hits in rankings],
        "ret_scores": [[h.score for h in hits] for hits in rankings],
        "run_path": str(run_file),
        "search_info": info,
    }


TOOLS = [retriever_search]
