"""The one place where the judge server turns its ``judge_llm`` setting into ``LLMSettings``."""

from __future__ import annotations

from typing import Any

from servers.core.llm.settings import LLMSettings
from servers.core.settings import complete_mapping, expand_env


def judge_settings(judge_llm: Any, **pacing: float) -> LLMSettings:
    """``judge_llm`` with the keys left out taken from parameter.yaml, ``${VAR}`` expanded, checked.

    ``pacing`` (``backoff_base`` / ``backoff_max``) is the client's retry policy; tests shorten it.
    """
    if isinstance(judge_llm, dict) and judge_llm.get("backend") == "local":
        judge_llm = {"api_key": "", **judge_llm}  # a local model needs no key from the environment
    mapping = complete_mapping(expand_env(judge_llm), server="judge", setting="judge_llm")
    return LLMSettings.from_mapping(mapping, name="judge_llm", **pacing)
