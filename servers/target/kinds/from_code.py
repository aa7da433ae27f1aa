"""What the kinds that call the user's own code share: its exception as a failed call, a passage's id."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from servers.target.kinds.base import TargetCallError

ID_KEYS = ("id", "doc_id", "docid", "pid", "document_id")  # metadata keys that name a passage's document
SCORE_KEYS = ("score", "relevance_score")  # metadata keys a retriever or reranker puts its score under
_DETAIL_CHARS = 300


def code_raised(exc: BaseException) -> TargetCallError:
    """The system's own code raised ``exc``: a ``target_error`` naming its class and (shortened) message."""
    message = " ".join(str(exc).split())
    if len(message) > _DETAIL_CHARS:
        message = message[:_DETAIL_CHARS] + "..."
    return TargetCallError("target_error", f"{type(exc).__name__}: {message}" if message else type(exc).__name__)


def metadata_id(metadata: Any, fallback: Any = None) -> str | None:
    """The first of ``ID_KEYS`` in ``metadata`` that holds a value, else ``fallback``, as a string (None if neither)."""
    if isinstance(metadata, Mapping):
        for key in ID_KEYS:
            value = metadata.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                return str(value)
    return str(fallback) if fallback not in (None, "") else None


def metadata_score(metadata: Any) -> float | None:
    """A numeric score among ``SCORE_KEYS`` of ``metadata``, or None."""
    if isinstance(metadata, Mapping):
        for key in SCORE_KEYS:
            value = metadata.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
    return None
