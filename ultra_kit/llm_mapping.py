"""A server's LLM mapping setting (``judge_llm``, ``generation_llm`` ...) turned into ``LLMSettings``."""

from __future__ import annotations

from typing import Any

from ultra_kit.settings import complete_mapping, expand_env
from ultra_llm.settings import LLMSettings


def settings_for(given: Any, *, server: str, setting: str, **pacing: float) -> LLMSettings:
    """``LLMSettings`` from a server's LLM mapping setting (``judge_llm`` ...), its left-out keys from parameter.yaml.

    The default ``api_key`` belongs to the default endpoint: a caller who names another endpoint
    (``base_url``, ``endpoints``) or a local model and no key gets none, so a key never goes to a host
    it was not written for, and a local model needs nothing from the environment.
    """
    # complete_mapping applies the api_key rule (merge_mapping)
    return LLMSettings.from_mapping(
        complete_mapping(expand_env(given), server=server, setting=setting), name=setting, **pacing
    )
