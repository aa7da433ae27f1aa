"""The retriever MCP server: ``retriever_init``, ``retriever_embed``, ``retriever_index``, ``retriever_search``.

Every tool reads its settings afresh (no hidden state between calls beyond a cache of loaded
indexes), so an agent may call ``retriever_search`` alone once an index is saved.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypedDict

from servers.retriever import bm25 as bm25_backend
from servers.retriever import dense as dense_backend
from servers.retriever.index import ensure_index, index_folder, open_index, read_meta, stale_reason, wanted_meta
from servers.retriever.ranking import query_ids, run_lines, write_run
from ultra_kit.errors import InputError
from ultra_kit.factory import ServerSpec, tool_hints
from ultra_kit.files import result_path
from ultra_kit.progress import no_progress, progress_from_context

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

Backend = Annotated[Literal["bm25", "dense"], Field(description="bm25 (default, no model) or dense (embeddings)")]
CorpusPath = Annotated[str, Field(description="JSONL corpus: id and contents/text per line")]
IndexPath = Annotated[str, Field(description="folder of saved indexes; <index_path>/<backend>/")]
Bm25Options = Annotated[
    dict[str, Any], Field(description="k1, b, method (lucene ...), stopwords (en | none); keys left out take defaults")
]
DenseOptions = Annotated[
    dict[str, Any],
    Field(
        description="provider (local | openai), model_id, base_url, api_key, batch_size, query_instruction, ...; "
        "keys left out take their defaults"
    ),
]
Overwrite = Annotated[bool, Field(description="rebuild even if the saved index is current")]


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


def backend_options(*, backend: str, bm25: dict[str, Any], dense: dict[str, Any]) -> dict[str, Any]:
    """The checked options of ``backend`` (its setting completed from parameter.yaml)."""
    if backend == "bm25":
        return bm25_backend.bm25_options(bm25)
    if backend == "dense":
        return dense_backend.dense_options(dense)
    raise InputError(f"backend must be bm25 or dense, got {backend!r}")


@tool_hints(read_only=True, idempotent=True)
def retriever_init(
    *,
    backend: Backend,
    corpus_path: CorpusPath,
    index_path: IndexPath,
    bm25: Bm25Options,
    dense: DenseOptions,
) -> InitResult:
    """Check the retriever settings and the corpus, and say whether a saved index is current.

    Reads the corpus once (ids unique, every record has a text); loads no model.
    """
    from servers.retriever.corpus import load_corpus

    options = backend_options(backend=backend, bm25=bm25, dense=dense)
    if backend == "dense" and options["provider"] == "local":
        from ultra_llm.local.models import resolve_embedding_model

        resolve_embedding_model(options["model_id"])
    passages = load_corpus(corpus_path)
    folder = index_folder(index_path=index_path, backend=backend)
    reason = stale_reason(read_meta(folder), wanted_meta(backend=backend, corpus_path=corpus_path, options=options))
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
    *, backend: str, corpus_path: str, index_path: str, options: dict[str, Any], overwrite: bool, ctx: Context | None
) -> IndexInfo:
    started = time.perf_counter()
    meta = await ensure_index(
        backend=backend,
        corpus_path=corpus_path,
        index_path=index_path,
        options=options,
        overwrite=overwrite,
        progress=_progress(ctx),
    )
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
    *,
    backend: Backend,
    corpus_path: CorpusPath,
    index_path: IndexPath,
    dense: DenseOptions,
    overwrite: Overwrite,
) -> EmbedResult:
    """Embed the corpus and save the embeddings (dense backend); BM25 needs no embeddings and skips.

    Dense search is exact, so the saved embeddings are the index: retriever_index then reuses them.
    """
    if backend == "bm25":
        info: IndexInfo = {
            "backend": "bm25",
            "status": "skipped",
            "reason": "bm25 needs no embeddings",
            "folder": str(index_folder(index_path=index_path, backend="bm25")),
            "passages": 0,
            "seconds": 0.0,
        }
        return {"embed_info": info}
    options = backend_options(backend=backend, bm25={}, dense=dense)  # bm25 returned above: it has no embeddings
    info = await _ensure(
        backend=backend, corpus_path=corpus_path, index_path=index_path, options=options, overwrite=overwrite, ctx=ctx
    )
    return {"embed_info": info}


@tool_hints(read_only=False, idempotent=True)
async def retriever_index(
    ctx: Context | None = None,
    *,
    backend: Backend,
    corpus_path: CorpusPath,
    index_path: IndexPath,
    bm25: Bm25Options,
    dense: DenseOptions,
    overwrite: Overwrite,
) -> IndexResult:
    """Build and save the index of the corpus, or reuse the saved one when corpus and settings are unchanged.

    The index lives in <index_path>/<backend>/ with meta.json (corpus SHA-256, settings, build time).
    """
    options = backend_options(backend=backend, bm25=bm25, dense=dense)
    info = await _ensure(
        backend=backend, corpus_path=corpus_path, index_path=index_path, options=options, overwrite=overwrite, ctx=ctx
    )
    return {"index_info": info}


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
    report = _progress(ctx)
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
