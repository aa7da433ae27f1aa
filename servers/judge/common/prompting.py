"""The judge's prompt files, ``prompts/<name>.txt`` (loaded by the LLM library's ``prompt_files``), and the
``Prompts`` of one tool call: the user's own versions of some of them and the language of the items.

Both are explicit: a judge's runner builds ``Prompts(language, overrides)`` from its ``language`` and
``prompt_file`` settings (``common.overrides.call_prompts``) and passes it down to ``ask``, which renders every
prompt through ``Prompts.messages``.

Language: the instructions stay English (they measure best across models); for a language other than English
a line is appended to the system message naming the language, asking for reasons in it and for extracted
statements, claims and nuggets in the source's language, never translated. ``en`` adds nothing, so English
prompts (and their cache keys) are unchanged. ``auto`` detects each request's language from its question (else
query, answer or text) offline.

Overrides: a user's own version of a built-in prompt (``prompt_file``, ``common.overrides``) replaces it for
the call: ``Prompts.load`` returns it instead of the built-in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from ultra_kit.languages import AUTO, append_to_system, check_language, detect_languages, language_name
from ultra_llm import prompt_files
from ultra_llm.prompt_files import Prompt

__all__ = ["PROMPT_DIR", "LanguageParam", "Prompt", "Prompts", "load_prompt"]

PROMPT_DIR = Path(__file__).parents[1] / "prompts"

LanguageParam = Annotated[
    str,
    Field(
        description="ISO 639-1 code of the questions and answers (reasons are asked in it; extracted statements "
        "stay in the source's language); en = the prompts as written; auto = detect each item's (extra languages)"
    ),
]
_TEXT_FIELDS = ("question", "query", "answer", "text", "reference")  # what auto detects the language of


def load_prompt(name: str) -> Prompt:
    """The built-in judge prompt ``prompts/<name>.txt`` (cached)."""
    return prompt_files.load_prompt(PROMPT_DIR, name)


@dataclass(frozen=True)
class Prompts:
    """The prompts one tool call asks with: the built-ins, the user's ``overrides`` of some ({prompt name: Prompt},
    read by ``common.overrides``), and the items' ``language`` (an ISO 639-1 code or ``auto``; checked)."""

    language: str
    overrides: Mapping[str, Prompt]

    def __post_init__(self) -> None:
        object.__setattr__(self, "language", check_language(self.language))

    @classmethod
    def as_written(cls) -> Prompts:
        """The built-in prompts as written: no override, no language line (a caller with no ``language`` or
        ``prompt_file`` setting, such as ``fill_qrels``)."""
        return cls("en", {})

    def load(self, name: str) -> Prompt:
        """The prompt ``name``: the call's override of it, else the built-in."""
        return self.overrides.get(name) or load_prompt(name)

    def messages(self, prompt: Prompt, values: dict[str, Any]) -> list[dict[str, str]]:
        """``prompt`` filled with ``values``, with the language line appended to the system message (or put
        first), unless English."""
        messages = prompt.render(**values)
        code = self.language
        if code == AUTO:
            text = next((str(values[name]) for name in _TEXT_FIELDS if str(values.get(name) or "").strip()), "")
            code = _detected(text) if text else "en"
        return messages if code == "en" else append_to_system(messages, language_line(code))


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
