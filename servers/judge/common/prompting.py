"""The judge's prompt files: ``prompts/<name>.txt``, loaded by the LLM library's ``prompt_files``."""

from __future__ import annotations

from pathlib import Path

from ultra_llm import prompt_files
from ultra_llm.prompt_files import Prompt

__all__ = ["PROMPT_DIR", "Prompt", "load_prompt"]

PROMPT_DIR = Path(__file__).parents[1] / "prompts"


def load_prompt(name: str) -> Prompt:
    """The judge prompt ``prompts/<name>.txt`` (cached)."""
    return prompt_files.load_prompt(PROMPT_DIR, name)
