"""``retriever_init``, ``retriever_embed`` and ``retriever_index``: check the settings, build and save the index."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from servers.retriever.index import ensure_index, index_folder, read_meta, stale_reason, wanted_meta
from servers.retriever.parameters import (
    Backend,
    Bm25Options,
    CorpusPath,
    DenseOptions,
    IndexPath,
    Overwrite,
    backend_options,
)
from servers.retriever.progress import context_progress
from ultra_kit.factory import tool_hints

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


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


class InitResult(TypedDict):
    retriever_info: RetrieverInfo


class EmbedResult(TypedDict):
    embed_info: IndexInfo


class IndexResult(TypedDict):
    index_info: IndexInfo


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
        progress=context_progress(ctx),
    )
    return {
        "backend": backend,
        "status": meta["status"],
        "reason": meta["reason"],
        "folder": meta["folder"],
        "passages": int(meta["passages"]),
        "seconds": round(time.perf_counter() - started, 3),
    }


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


TOOLS = [retriever_init, retriever_embed, retriever_index]
