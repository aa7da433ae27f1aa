"""The judge's prompt files: ``prompts/<name>.txt``, loaded by the LLM library's ``prompt_files``.

A user's own version of a built-in prompt (``prompt_file``, ``common.overrides``) replaces it while a tool
runs: ``load_prompt`` returns the override set in ``OVERRIDES`` for this call.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path

from ultra_llm import prompt_files
from ultra_llm.prompt_files import Prompt

__all__ = ["OVERRIDES", "PROMPT_DIR", "Prompt", "load_prompt"]

PROMPT_DIR = Path(__file__).parents[1] / "prompts"
OVERRIDES: ContextVar[Mapping[str, Prompt]] = ContextVar("judge_prompt_overrides", default={})  # noqa: B039


def load_prompt(name: str) -> Prompt:
    """The judge prompt ``prompts/<name>.txt`` (cached), or this call's override of it."""
    return OVERRIDES.get().get(name) or prompt_files.load_prompt(PROMPT_DIR, name)
