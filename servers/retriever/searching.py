"""What ``retriever_search`` does (the tool face is ``tools/search.py``): open the saved index, rank each
query's passages with its backend (BM25 or dense), write the TREC run file."""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any

from servers.retriever import bm25 as bm25_backend
from servers.retriever import dense as dense_backend
from servers.retriever.index import open_index
from servers.retriever.parameters import backend_options
from servers.retriever.progress import context_progress
from servers.retriever.ranking import query_ids, run_lines, write_run
from ultra_base.errors import InputError
from ultra_kit.files import result_path

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


async def run_search(
    q_ls: list[str],
    id_ls: list[str] | None,
    *,
    backend: str,
    index_path: str,
    top_k: int,
    bm25: dict[str, Any],
    dense: dict[str, Any],
    save_path: str,
    run_tag: str,
    ctx: Context | None,
) -> dict[str, Any]:
    """``retriever_search``'s result (its settings as the tool received them)."""
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
    info: dict[str, Any] = {
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
