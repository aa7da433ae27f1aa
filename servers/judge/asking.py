"""Ask a judge for a structured reply, read it, and ask again with a repair message when it is unreadable.

Shared by ``nuggets`` and ``answer_judges``. A reader turns the reply text into a value or raises
``Unreadable`` with the reason; after ``max_retries`` repairs the item is reported as a
``parse_error`` with the raw reply. Transport failures come back as ``error``. Nothing unreadable
is ever turned into a value.

With structured output (``judge_llm.structured_output``; always with the local backend) the runner
sets ``REPLY_SCHEMAS`` to the judge's declared reply schemas, and each request carries its prompt's
schema as ``response_format``; the reply is still read (and may still fail) the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from servers.core.llm.client import LLMClient
from servers.core.llm.reply_schema import response_format

# Judges' sampling: deterministic where the endpoint allows it.
SAMPLING = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1024, "seed": 42}

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
# prompt name -> the JSON schema of its reply, set by the runner when the judge LLM takes structured output
REPLY_SCHEMAS: ContextVar[Mapping[str, dict[str, Any]] | None] = ContextVar("reply_schemas", default=None)


class Unreadable(ValueError):
    """The reply holds no value of the expected shape; the message says why."""


@dataclass
class Answer:
    """The value read from a reply, or why there is none."""

    status: Literal["ok", "parse_error", "error"]
    value: Any = None
    raw: str | None = None
    error: str | None = None
    requests: int = 0
    cached: bool = True


async def ask(
    client: LLMClient,
    messages: list[dict[str, str]],
    *,
    read: Callable[[str], Any],
    repair: str,
    version: str,
    max_retries: int,
    sampling: dict[str, Any] | None = None,
    length: int | None = None,
) -> Answer:
    """One judged item: ask, read, and repair up to ``max_retries`` times.

    ``length``: the number of items each list of a schema-constrained reply must hold (one verdict per statement).
    """
    sampling = SAMPLING if sampling is None else sampling
    name = version.partition("@")[0]
    schema = (REPLY_SCHEMAS.get() or {}).get(name)
    if schema is not None:
        sampling = {**sampling, "response_format": response_format(name, schema, length=length)}
    requests, cached = 0, True
    for attempt in range(max_retries + 1):
        reply = await client.chat(messages, sampling, prompt=version)
        requests += reply.attempts
        cached = cached and reply.cached
        if reply.status != "ok":
            return Answer("error", error=reply.error, requests=requests, cached=cached)
        text = reply.text if reply.text.strip() else (reply.reasoning or "")
        try:
            return Answer("ok", read(text), requests=requests, cached=cached)
        except Unreadable as exc:
            reason = str(exc)
        if attempt == max_retries:
            return Answer(
                "parse_error",
                raw=reply.text,
                error=f"unreadable after {attempt + 1} replies: {reason}",
                requests=requests,
                cached=cached,
            )
        note = f"Your reply could not be used: {reason}. {repair}"
        messages = [*messages, {"role": "assistant", "content": reply.text}, {"role": "user", "content": note}]
    raise AssertionError("unreachable")  # pragma: no cover


def last_json(text: str, kind: type) -> Any:
    """The last JSON value of type ``kind`` (list or dict) in ``text``: fenced blocks first, then brackets."""
    open_char, close_char = ("[", "]") if kind is list else ("{", "}")
    candidates = [block.strip() for block in _FENCE.findall(text)]
    stripped = text.strip()
    candidates.append(stripped)
    # every balanced bracketed span, last first
    spans = []
    for start in (i for i, ch in enumerate(text) if ch == open_char):
        depth = 0
        for end in range(start, len(text)):
            if text[end] == open_char:
                depth += 1
            elif text[end] == close_char:
                depth -= 1
                if depth == 0:
                    spans.append(text[start : end + 1])
                    break
    candidates.extend(reversed(spans))
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, kind):
            return value
    raise Unreadable(f"no JSON {kind.__name__} in the reply")


def label_list(text: str, *, allowed: dict[str, str], length: int) -> list[str]:
    """A JSON list of exactly ``length`` labels, each a key of ``allowed`` (case-insensitive; mapped to its value)."""
    values = last_json(text, list)
    if len(values) != length:
        raise Unreadable(f"expected a list of {length} labels, got {len(values)}")
    labels = []
    for value in values:
        key = str(value).strip().lower().replace(" ", "_").replace("-", "_")
        if key not in allowed:
            raise Unreadable(f"label {value!r} is not one of {sorted(set(allowed.values()))}")
        labels.append(allowed[key])
    return labels
