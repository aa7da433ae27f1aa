"""Where and how to ask an LLM: one mapping (``judge_llm``, ``generation_llm`` ...) checked into ``LLMSettings``.

The mapping holds the endpoint (``backend``, ``base_url``, ``model_id``, ``api_key``), the model's
kind (``reasoning``, ``structured_output``, ``embedding_model``) and the client's limits
(``timeout``, ``max_retries``, ``max_workers``). A server passes the name its users know the
mapping by, so every error message names that setting; nothing is renamed afterwards.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from servers.core.errors import InputError

BACKENDS = ("openai", "local")
ENDPOINT_KEYS = ("backend", "base_url", "model_id", "api_key", "reasoning", "structured_output", "embedding_model")
LIMIT_KEYS = ("timeout", "max_retries", "max_workers")
LLM_KEYS = frozenset(ENDPOINT_KEYS + LIMIT_KEYS)
# Retry pacing is the client's own policy, not a user setting; tests shorten it.
BACKOFF_BASE = 0.5
BACKOFF_MAX = 30.0


@dataclass(frozen=True)
class LLMSettings:
    """A checked LLM mapping: endpoint, model kind and client limits."""

    model_id: str
    base_url: str
    api_key: str = field(repr=False)
    backend: Literal["openai", "local"]
    reasoning: bool
    structured_output: bool
    embedding_model: str
    timeout: float
    max_retries: int
    max_workers: int
    backoff_base: float = BACKOFF_BASE
    backoff_max: float = BACKOFF_MAX

    @classmethod
    def from_mapping(cls, mapping: Any, *, name: str, **pacing: float) -> LLMSettings:
        """Check ``mapping`` (the setting called ``name``); unknown, missing or bad keys raise InputError.

        ``backend``, ``api_key``, ``reasoning``, ``structured_output`` and ``embedding_model`` may be
        left out (openai, none, off, off, the chat model); ``model_id`` and the limits may not.
        ``pacing`` sets ``backoff_base`` / ``backoff_max`` (tests).
        """
        if not isinstance(mapping, dict):
            raise InputError(f"{name} must be a mapping with keys {sorted(LLM_KEYS)}, got {type(mapping).__name__}")
        unknown = set(mapping) - LLM_KEYS
        if unknown:
            raise InputError(f"{name} has unknown keys {sorted(unknown)}; known keys: {sorted(LLM_KEYS)}")
        missing = [key for key in LIMIT_KEYS if mapping.get(key) is None]
        if missing:
            raise InputError(f"{name} needs {missing} (seconds per request, retries, requests in flight)")
        backend = mapping.get("backend") or "openai"
        if backend not in BACKENDS:
            raise InputError(f"{name}.backend must be one of {list(BACKENDS)}, got {backend!r}")
        model_id = str(mapping.get("model_id") or "")
        base_url = str(mapping.get("base_url") or "")
        if backend == "openai" and not (model_id and base_url):
            raise InputError(
                f"{name} needs base_url and model_id for the openai backend (any OpenAI-compatible server)"
            )
        try:
            timeout, retries, workers = (
                float(mapping["timeout"]),
                int(mapping["max_retries"]),
                int(mapping["max_workers"]),
            )
        except (TypeError, ValueError):
            raise InputError(f"{name}.timeout, .max_retries and .max_workers must be numbers") from None
        if timeout <= 0 or workers < 1 or retries < 0:
            raise InputError(f"{name}.timeout must be > 0, {name}.max_workers >= 1 and {name}.max_retries >= 0")
        return cls(
            model_id=model_id,
            base_url=base_url,
            api_key=str(mapping.get("api_key") or ""),
            backend=backend,
            reasoning=bool(mapping.get("reasoning") or False),
            structured_output=bool(mapping.get("structured_output") or False),
            embedding_model=str(mapping.get("embedding_model") or ""),
            timeout=timeout,
            max_retries=retries,
            max_workers=workers,
            **pacing,
        )

    def public(self) -> dict[str, Any]:
        """The settings as they may be written to a result: without the API key."""
        data = asdict(self)
        data.pop("api_key")
        return data


def settings_for(given: Any, *, server: str, setting: str, **pacing: float) -> LLMSettings:
    """``LLMSettings`` from a server's LLM mapping setting (``judge_llm`` ...), its left-out keys from parameter.yaml.

    The default ``api_key`` belongs to the default endpoint: a caller who names another endpoint
    (``base_url``) or a local model and no key gets none, so a key never goes to a host it was not
    written for, and a local model needs nothing from the environment.
    """
    from servers.core.settings import complete_mapping, expand_env

    # complete_mapping applies the api_key rule (servers.core.settings.merge_mapping)
    return LLMSettings.from_mapping(
        complete_mapping(expand_env(given), server=server, setting=setting), name=setting, **pacing
    )
