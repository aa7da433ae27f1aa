"""Parameter types shared by the nuggetize and answer-judge tools (defaults agree with parameter.yaml)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

DEFAULT_LLM = {
    "backend": "openai",
    "base_url": "https://api.openai.com/v1",
    "model_id": "gpt-4o-mini",
    "api_key": "${OPENAI_API_KEY}",
    "reasoning": False,
    "structured_output": False,
    "embedding_model": "",
}

LLMSpec = Annotated[
    dict[str, Any],
    Field(
        description="OpenAI-compatible endpoint {backend, base_url, model_id, api_key, reasoning, structured_output}"
    ),
]
Timeout = Annotated[float, Field(description="seconds per request")]
Retries = Annotated[int, Field(description="retries per request, and per unreadable reply")]
Workers = Annotated[int, Field(description="requests in flight at most")]
CachePath = Annotated[str, Field(description="SQLite answer cache ('' = none)")]
SavePath = Annotated[str, Field(description="directory or file name for the result")]
DEFAULT_CACHE = "output/judge_cache.sqlite"
DEFAULT_SAVE = "output/judge"
