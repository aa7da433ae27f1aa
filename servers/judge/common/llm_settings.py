"""The one place where the judge server turns its ``judge_llm`` setting into ``LLMSettings``."""

from __future__ import annotations

from typing import Any

from ultra_kit.llm_mapping import settings_for
from ultra_llm.settings import LLMSettings


def judge_settings(judge_llm: Any, **pacing: float) -> LLMSettings:
    """``judge_llm`` checked, its left-out keys from parameter.yaml (``pacing``: the retry policy; tests shorten it)."""
    return settings_for(judge_llm, server="judge", setting="judge_llm", **pacing)
