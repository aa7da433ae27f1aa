"""The settings the retriever's tools share, as published (annotated types), and the backend options they name."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from servers.retriever import bm25 as bm25_backend
from servers.retriever import dense as dense_backend
from ultra_base.errors import InputError

Backend = Annotated[Literal["bm25", "dense"], Field(description="bm25 (default, no model) or dense (embeddings)")]
CorpusPath = Annotated[str, Field(description="JSONL corpus: id and contents/text per line")]
IndexPath = Annotated[str, Field(description="folder of saved indexes; <index_path>/<backend>/")]
Bm25Options = Annotated[
    dict[str, Any], Field(description="k1, b, method (lucene ...), stopwords (en | none); keys left out take defaults")
]
DenseOptions = Annotated[
    dict[str, Any],
    Field(
        description="provider (local | openai), model_id, base_url, api_key, batch_size, query_instruction, "
        "max_workers (at most caps.max_workers), max_retries (at most caps.max_retries), ...; keys left out take their "
        "defaults"
    ),
]
Overwrite = Annotated[bool, Field(description="rebuild even if the saved index is current")]


def backend_options(*, backend: str, bm25: dict[str, Any], dense: dict[str, Any]) -> dict[str, Any]:
    """The checked options of ``backend`` (its setting completed from parameter.yaml)."""
    if backend == "bm25":
        return bm25_backend.bm25_options(bm25)
    if backend == "dense":
        return dense_backend.dense_options(dense)
    raise InputError(f"backend must be bm25 or dense, got {backend!r}")
