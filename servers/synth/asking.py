"""Ask the synth LLM: prompt files under ``prompts/``, strict readers of the replies, a bounded number of repairs.

The judge server has the same shape of helper; servers do not import each other, so this one is small
and synth's own. An unreadable reply after the repairs is reported (``Asked.error``), never guessed at.
With structured output (``synth_llm.structured_output``; always with the local backend) each request
carries its prompt's reply schema (``REPLY_SCHEMAS``) as ``response_format``; the readers accept both.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers.core.errors import InputError
from servers.core.llm.client import LLMClient
from servers.core.llm.reply_schema import array, choice, obj, response_format, text

PROMPT_DIR = Path(__file__).parent / "prompts"
SAMPLING = {"temperature": 0.0, "top_p": 1.0, "seed": 42}
_SECTION = re.compile(r"^=== (system|user) ===\s*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_LINE_Q = re.compile(r"^\W*question\W*:\s*(\S.*)$", re.IGNORECASE | re.MULTILINE)
_LINE_A = re.compile(r"^\W*answer\W*:\s*(\S.*)$", re.IGNORECASE | re.MULTILINE)
_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+(.+)$", re.MULTILINE)
_LETTER = re.compile(r"[^\W\d_]")
# prompt name -> the JSON schema of its reply under structured output (a list prompt's list holds n items)
REPLY_SCHEMAS = {
    "grounded_question_v1": obj(question=text(), answer=text()),
    "self_check_v1": obj(answerable=choice("yes", "no")),
    "off_topic_v2": obj(requests=array(text())),
    "jailbreak_v2": obj(attempts=array(text())),
}


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str  # name@sha256[:12], part of the cache key
    sections: tuple[tuple[str, str], ...]

    def render(self, **values: Any) -> list[dict[str, str]]:
        """Chat messages with each ``{placeholder}`` filled once (filled text is not expanded again)."""

        def fill(match: re.Match[str]) -> str:
            return str(values[match.group(1)]) if match.group(1) in values else match.group(0)

        return [{"role": role, "content": _PLACEHOLDER.sub(fill, text)} for role, text in self.sections]


@functools.lru_cache(maxsize=16)
def load_prompt(name: str) -> Prompt:
    """``prompts/<name>.txt``: ``=== system ===`` / ``=== user ===`` sections."""
    path = PROMPT_DIR / f"{name}.txt"
    if not path.is_file():
        raise InputError(f"no synth prompt named {name!r}", path=str(path))
    text = path.read_text(encoding="utf-8")
    parts = _SECTION.split(text)
    sections = tuple((role, body.strip("\n")) for role, body in zip(parts[1::2], parts[2::2], strict=True))
    return Prompt(name, f"{name}@{hashlib.sha256(text.encode()).hexdigest()[:12]}", sections)


@dataclass
class Asked:
    """A JSON value read from the reply, or why there is none; the requests it took."""

    value: Any = None
    error: str | None = None
    requests: int = 0


def json_value(text: str, kind: type) -> Any:
    """The last JSON ``kind`` (dict or list) in ``text``: a fenced block, the whole text, or a bracketed span."""
    candidates = [block.strip() for block in _FENCE.findall(text)] + [text.strip()]
    opener = "[" if kind is list else "{"
    decoder = json.JSONDecoder()
    spans = []
    for start in (i for i, ch in enumerate(text) if ch == opener):
        try:
            spans.append(decoder.raw_decode(text[start:])[0])
        except json.JSONDecodeError:
            continue
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, kind):
            return value
    for value in reversed(spans):
        if isinstance(value, kind):
            return value
    raise ValueError(f"no JSON {kind.__name__} in the reply")


def question_and_answer(text: str) -> dict[str, str]:
    """A JSON object with ``question`` and ``answer``, else the first ``Question: ...`` and ``Answer: ...`` lines."""
    try:
        value = json_value(text, dict)
        question, answer = str(value.get("question") or "").strip(), str(value.get("answer") or "").strip()
        if question and answer:
            return {"question": question, "answer": answer}
    except ValueError:
        pass
    question_line, answer_line = _LINE_Q.search(text), _LINE_A.search(text)
    if not (question_line and answer_line):
        raise ValueError("expected a 'Question: ...' line and an 'Answer: ...' line")
    return {"question": question_line.group(1).strip(), "answer": answer_line.group(1).strip()}


def listed_lines(text: str) -> list[str]:
    """The items of a list written one per line (``- item``, ``* item``, ``1. item``), or of a JSON list;
    an item without a letter ("," or "1.1.1", what a small model writes under a schema) is no item."""
    items = [m.group(1).strip() for m in _ITEM.finditer(text) if _LETTER.search(m.group(1))]
    if items:
        return items
    try:
        values = json_value(text, list)
    except ValueError:
        raise ValueError("expected a JSON list, or one item per line, each starting with '- '") from None
    return [str(v).strip() for v in values if isinstance(v, (str, int, float)) and _LETTER.search(str(v))]


def answerable(text: str) -> str:
    """The self-check's verdict: ``{"answerable": "yes"|"no"}``."""
    verdict = str(json_value(text, dict).get("answerable", "")).strip().lower()
    if verdict not in ("yes", "no"):
        raise ValueError('expected {"answerable": "yes"} or {"answerable": "no"}')
    return verdict


async def ask_read(
    client: LLMClient, prompt: str, read: Callable[[str], Any], *, retries: int, max_tokens: int, **values: Any
) -> Asked:
    """Ask with prompt file ``prompt`` (replies capped at ``max_tokens``) and ``read`` the reply (it raises
    ValueError when the reply has no value); an unreadable reply is asked again up to ``retries`` times."""
    loaded = load_prompt(prompt)
    messages = loaded.render(**values)
    sampling: dict[str, Any] = {**SAMPLING, "max_tokens": max_tokens}
    if client.settings.structured_output and prompt in REPLY_SCHEMAS:
        length = values.get("n") if isinstance(values.get("n"), int) else None
        sampling["response_format"] = response_format(prompt, REPLY_SCHEMAS[prompt], length=length)
    requests = 0
    for attempt in range(retries + 1):
        reply = await client.chat(messages, sampling, prompt=loaded.version)
        requests += reply.attempts
        if reply.status != "ok":
            return Asked(error=reply.error, requests=requests)
        try:
            return Asked(read(reply.text), requests=requests)
        except ValueError as exc:
            reason = str(exc)
        if attempt == retries:
            return Asked(error=f"unreadable after {attempt + 1} replies: {reason}", requests=requests)
        note = f"Your reply could not be used: {reason}. Reply in that format only."
        messages = [*messages, {"role": "assistant", "content": reply.text}, {"role": "user", "content": note}]
    raise AssertionError("unreachable")  # pragma: no cover
