"""The retriever MCP server: ``retriever_init``, ``retriever_embed``, ``retriever_index``, ``retriever_search``.

Every tool reads its settings afresh (no hidden state between calls beyond a cache of loaded
indexes), so an agent may call ``retriever_search`` alone once an index is saved.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypedDict

from servers.core.errors import InputError
from servers.core.factory import ServerSpec, tool_hints
from servers.core.files import result_path
from servers.core.progress import no_progress, progress_from_context
from servers.retriever import bm25 as bm25_backend
from servers.retriever import dense as dense_backend
from servers.retriever.index import ensure_index, index_folder, open_index, read_meta, stale_reason, wanted_meta
from servers.retriever.ranking import query_ids, run_lines, write_run

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

Backend = Annotated[Literal["bm25", "dense"], Field(description="bm25 (default, no model) or dense (embeddings)")]
CorpusPath = Annotated[str, Field(description="JSONL corpus: id and contents/text per line")]
IndexPath = Annotated[str, Field(description="folder of saved indexes; <index_path>/<backend>/")]
Bm25Options = Annotated[dict[str, Any], Field(description="k1, b, method (lucene ...), stopwords (en | none)")]
DenseOptions = Annotated[
    dict[str, Any],
    Field(description="provider (local | openai), model_id, base_url, api_key, batch_size, query_instruction, ..."),
]
Overwrite = Annotated[bool, Field(description="rebuild even if the saved index is current")]

DEFAULTS: dict[str, Any] = {
    "backend": "bm25",
    "corpus_path": "data/rag/corpus.jsonl",
    "index_path": "output/index/rag",
    "overwrite": False,
    "top_k": 5,
    "save_path": "output/retriever",
    "run_tag": "ultra",
}


class RetrieverInfo(TypedDict):
    backend: str
    corpus_path: str
    passages: int
    index_folder: str
    index_status: str


class IndexInfo(TypedDict):
    backend: str
    status: str
    reason: str
    folder: str
    passages: int
    seconds: float


class SearchInfo(TypedDict):
    backend: str
    top_k: int
    queries: int
    queries_without_results: int
    queries_with_fewer_than_top_k: int
    seconds: float


class InitResult(TypedDict):
    retriever_info: RetrieverInfo


class EmbedResult(TypedDict):
    embed_info: IndexInfo


class IndexResult(TypedDict):
    index_info: IndexInfo


class SearchResult(TypedDict):
    ret_psg: list[list[str]]
    ret_ids: list[list[str]]
    ret_scores: list[list[float]]
    run_path: str
    search_info: SearchInfo


def backend_options(backend: str, bm25_settings: dict[str, Any], dense_settings: dict[str, Any]) -> dict[str, Any]:
    """The checked options of ``backend``."""
    if backend == "bm25":
        return bm25_backend.bm25_options(bm25_settings)
    if backend == "dense":
        return dense_backend.dense_options(dense_settings)
    raise InputError(f"backend must be bm25 or dense, got {backend!r}")


@tool_hints(read_only=True, idempotent=True)
def retriever_init(
    backend: Backend = "bm25",
    corpus_path: CorpusPath = "data/rag/corpus.jsonl",
    index_path: IndexPath = "output/index/rag",
    bm25: Bm25Options | None = None,
    dense: DenseOptions | None = None,
) -> InitResult:
    """Check the retriever settings and the corpus, and say whether a saved index is current.

    Reads the corpus once (ids unique, every record has a text); loads no model.
    """
    from servers.retriever.corpus import load_corpus

    options = backend_options(backend, bm25 or {}, dense or {})
    if backend == "dense" and options["provider"] == "local":
        from servers.core.llm.local import resolve_embedding_model

        resolve_embedding_model(options["model_id"])
    passages = load_corpus(corpus_path)
    folder = index_folder(index_path, backend)
    reason = stale_reason(read_meta(folder), wanted_meta(backend, corpus_path, options))
    status = "current" if reason is None else f"needs building ({reason})"
    info: RetrieverInfo = {
        "backend": backend,
        "corpus_path": corpus_path,
        "passages": len(passages),
        "index_folder": str(folder),
        "index_status": status,
    }
    return {"retriever_info": info}


async def _ensure(
    backend: str, corpus_path: str, index_path: str, options: dict[str, Any], overwrite: bool, ctx: Context | None
) -> IndexInfo:
    started = time.perf_counter()
    meta = await ensure_index(backend, corpus_path, index_path, options, overwrite=overwrite, progress=_progress(ctx))
    return {
        "backend": backend,
        "status": meta["status"],
        "reason": meta["reason"],
        "folder": meta["folder"],
        "passages": int(meta["passages"]),
        "seconds": round(time.perf_counter() - started, 3),
    }


def _progress(ctx: Context | None):
    """A progress callback usable from the event loop (dense embedding) and from worker threads (BM25)."""
    if ctx is None:
        return no_progress
    import asyncio

    from_thread = progress_from_context(ctx)
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task] = set()

    def report(done: float, total: float | None = None, message: str | None = None) -> None:
        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            task = loop.create_task(ctx.report_progress(done, total, message))
            tasks.add(task)  # keep a reference until it ran
            task.add_done_callback(tasks.discard)
        else:
            from_thread(done, total, message)

    return report


@tool_hints(read_only=False, idempotent=True)
async def retriever_embed(
    ctx: Context | None = None,
    backend: Backend = "bm25",
    corpus_path: CorpusPath = "data/rag/corpus.jsonl",
    index_path: IndexPath = "output/index/rag",
    dense: DenseOptions | None = None,
    overwrite: Overwrite = False,
) -> EmbedResult:
    """Embed the corpus and save the embeddings (dense backend); BM25 needs no embeddings and skips.

    Dense search is exact, so the saved embeddings are the index: retriever_index then reuses them.
    """
    if backend == "bm25":
        info: IndexInfo = {
            "backend": "bm25",
            "status": "skipped",
            "reason": "bm25 needs no embeddings",
            "folder": str(index_folder(index_path, "bm25")),
            "passages": 0,
            "seconds": 0.0,
        }
        return {"embed_info": info}
    options = backend_options(backend, {}, dense or {})
    return {"embed_info": await _ensure(backend, corpus_path, index_path, options, overwrite, ctx)}


@tool_hints(read_only=False, idempotent=True)
async def retriever_index(
    ctx: Context | None = None,
    backend: Backend = "bm25",
    corpus_path: CorpusPath = "data/rag/corpus.jsonl",
    index_path: IndexPath = "output/index/rag",
    bm25: Bm25Options | None = None,
    dense: DenseOptions | None = None,
    overwrite: Overwrite = False,
) -> IndexResult:
    """Build and save the index of the corpus, or reuse the saved one when corpus and settings are unchanged.

    The index lives in <index_path>/<backend>/ with meta.json (corpus SHA-256, settings, build time).
    """
    options = backend_options(backend, bm25 or {}, dense or {})
    return {"index_info": await _ensure(backend, corpus_path, index_path, options, overwrite, ctx)}


@tool_hints(read_only=False, idempotent=True)
async def retriever_search(
    q_ls: Annotated[list[str], Field(description="the queries")],
    id_ls: Annotated[list[str] | None, Field(description="query ids for the run file (default q1..qN)")] = None,
    backend: Backend = "bm25",
    index_path: IndexPath = "output/index/rag",
    top_k: Annotated[int, Field(description="passages per query; fewer when fewer match", ge=1)] = 5,
    bm25: Bm25Options | None = None,
    dense: DenseOptions | None = None,
    save_path: Annotated[str, Field(description="folder (file retriever_search_<timestamp>.trec) or file name")] = (
        "output/retriever"
    ),
    run_tag: Annotated[str, Field(description="the run's tag column")] = "ultra",
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
    options = backend_options(backend, bm25 or {}, dense or {})
    index = await anyio.to_thread.run_sync(open_index, index_path, backend)
    if backend == "dense" and index.meta.get("settings") != dense_backend.identity(options):
        raise InputError(
            f"the dense index in {index.folder} was built with {index.meta.get('settings')}, but the dense setting "
            f"is {dense_backend.identity(options)}; run retriever_index first"
        )
    report = _progress(ctx)
    report(0, len(q_ls), "searching")
    if backend == "bm25":
        stop = index.meta["settings"]["stopwords"]
        rankings = await anyio.to_thread.run_sync(bm25_backend.search, index.model, q_ls, index.doc_ids, top_k, stop)
    else:
        vectors = await dense_backend.embed([options["query_instruction"] + q for q in q_ls], options)
        rankings = await anyio.to_thread.run_sync(dense_backend.search, index.model, vectors, index.doc_ids, top_k)
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


TOOLS = [retriever_init, retriever_embed, retriever_index, retriever_search]


SPEC = ServerSpec(
    "retriever",
    Path(__file__).parent,
    lambda: TOOLS,
    instructions=(
        "Retrieves passages from a corpus: BM25 by default, or dense embeddings. retriever_index builds "
        "and saves the index (reused when unchanged); retriever_search returns passages per query and "
        "writes a TREC run file for evaluation.evaluate_trec."
    ),
)


def create_app():
    """Build the retriever server."""
    return SPEC.create_app()


def main() -> None:
    """Serve over stdio."""
    create_app().run()


if __name__ == "__main__":
    main()
