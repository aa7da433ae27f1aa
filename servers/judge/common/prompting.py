"""The judge's prompt files: ``prompts/<name>.txt``, loaded by the LLM library's ``prompt_files``;
and the one place that tells the model the language of the item (the ``language`` setting).

A tool runs its judging inside ``judge_language(language)``; ``ask`` then passes every rendered
prompt through ``in_language``. The instructions stay English (they measure best across models);
for a language other than English a line is appended to the system message naming the language,
asking for reasons in it and for extracted statements, claims and nuggets in the source's language,
never translated. ``en`` adds nothing, so English prompts (and their cache keys) are unchanged.
``auto`` detects each request's language from its question (else query, answer or text) offline.

A user's own version of a built-in prompt (``prompt_file``, ``common.overrides``) replaces it while a tool
runs: ``load_prompt`` returns the override set in ``OVERRIDES`` for this call.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from ultra_kit.languages import AUTO, append_to_system, check_language, detect_languages, language_name
from ultra_llm import prompt_files
from ultra_llm.prompt_files import Prompt

__all__ = ["OVERRIDES", "PROMPT_DIR", "LanguageParam", "Prompt", "in_language", "judge_language", "load_prompt"]

PROMPT_DIR = Path(__file__).parents[1] / "prompts"
OVERRIDES: ContextVar[Mapping[str, Prompt]] = ContextVar("judge_prompt_overrides", default={})  # noqa: B039

LanguageParam = Annotated[
    str,
    Field(
        description="ISO 639-1 code of the questions and answers (reasons are asked in it; extracted statements "
        "stay in the source's language); en = the prompts as written; auto = detect each item's (extra languages)"
    ),
]
_LANGUAGE: ContextVar[str] = ContextVar("judge_language", default="en")
_TEXT_FIELDS = ("question", "query", "answer", "text", "reference")  # what auto detects the language of


def load_prompt(name: str) -> Prompt:
    """The judge prompt ``prompts/<name>.txt`` (cached), or this call's override of it."""
    return OVERRIDES.get().get(name) or prompt_files.load_prompt(PROMPT_DIR, name)


@contextmanager
def judge_language(language: str) -> Iterator[str]:
    """Judge in ``language`` inside the block (checked: an ISO 639-1 code or ``auto``)."""
    token = _LANGUAGE.set(check_language(language))
    try:
        yield _LANGUAGE.get()
    finally:
        _LANGUAGE.reset(token)


def language_line(code: str) -> str:
    """What the model is told about the item's language."""
    name = language_name(code)
    return (
        f"Language: the question and the answer are in {name}. Keep the JSON keys and labels these instructions "
        f"ask for as written; write every reason or explanation in {name}; write every statement, claim or "
        f"nugget you extract, and every question you write, in the language of the text it comes from "
        f"({name} here), never translated into English."
    )


@lru_cache(maxsize=4096)
def _detected(text: str) -> str:
    return detect_languages([text])[0] or "en"


def in_language(messages: list[dict[str, str]], values: dict[str, Any]) -> list[dict[str, str]]:
    """``messages`` with the language line appended to the system message (or put first), unless English."""
    code = _LANGUAGE.get()
    if code == AUTO:
        text = next((str(values[name]) for name in _TEXT_FIELDS if str(values.get(name) or "").strip()), "")
        code = _detected(text) if text else "en"
    return messages if code == "en" else append_to_system(messages, language_line(code))
