"""Token log-probabilities of chat replies: asked for with ``logprobs`` / ``top_logprobs``, kept in the cache.

The answer cache stores a reply's text; the log-probabilities that came with it are stored beside it, as a
companion entry under a key derived from the answer's own key (``companion_key``), so a cached answer
comes back with them. An endpoint that rejects the parameters has them dropped (the client's optional
parameters), and its replies simply carry none.
"""

from __future__ import annotations

import json
from typing import Any

from ultra_base.file_limits import loads_limited
from ultra_llm.cache import CachedAnswer

LOGPROB_PARAMS = ("logprobs", "top_logprobs")  # optional: dropped when an endpoint names them in a 400
PROMPT = "logprobs"  # the companion entry's prompt column


def companion_key(key: str) -> str:
    """The cache key of the log-probabilities stored with the answer under ``key``."""
    return f"{key}:logprobs"


def keep_logprobs(cache: Any, key: str, reply: Any, model_id: str) -> None:
    """Store ``reply.logprobs`` (when there are any) beside the answer under ``key``."""
    if reply.logprobs:
        answer = CachedAnswer(json.dumps(reply.logprobs), None, 0, 0)
        cache.put(companion_key(key), model_id=model_id, prompt=PROMPT, request={"of": key}, answer=answer)


def kept_logprobs(cache: Any, key: str) -> list[dict[str, Any]] | None:
    """The log-probabilities stored beside the answer under ``key``, or None."""
    hit = cache.get(companion_key(key))
    if hit is None:
        return None
    try:
        value = loads_limited(hit.text, path="the answer cache")
    except ValueError:  # not JSON, or too deep
        return None
    return value if isinstance(value, list) else None
