"""How the judge asks: its sampling, its reply schemas, and its reading of JSON in a reply.

Shared by ``nuggets`` and ``answer_judges``. The ask-read-repair loop is the LLM library's
(``ultra_llm.asking``): a reader turns the reply text into a value or raises ``Unreadable``
with the reason; after ``max_retries`` repairs the item is reported as a ``parse_error`` with the
raw reply. Transport failures come back as ``error``. Nothing unreadable is ever turned into a value.

With structured output (``judge_llm.structured_output``; always with the local backend) the runner
sets ``REPLY_SCHEMAS`` to the judge's declared reply schemas, and each request carries its prompt's
schema as ``response_format``; the reply is still read (and may still fail) the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from ultra_llm import reply_json
from ultra_llm.asking import Answer, ask_until_readable
from ultra_llm.client import LLMClient
from ultra_llm.reply_json import Unreadable
from ultra_llm.reply_schema import response_format

__all__ = ["REPLY_SCHEMAS", "SAMPLING", "Answer", "Unreadable", "ask", "label_list", "last_json"]

# Judges' sampling: deterministic where the endpoint allows it.
SAMPLING = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1024, "seed": 42}
# prompt name -> the JSON schema of its reply, set by the runner when the judge LLM takes structured output
REPLY_SCHEMAS: ContextVar[Mapping[str, dict[str, Any]] | None] = ContextVar("reply_schemas", default=None)


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
    """One judged item: ask, read, and repair up to ``max_retries`` times (a blank reply is read from the reasoning).

    ``length``: the number of items each list of a schema-constrained reply must hold (one verdict per statement).
    """
    sampling = SAMPLING if sampling is None else sampling
    name = version.partition("@")[0]
    schema = (REPLY_SCHEMAS.get() or {}).get(name)
    if schema is not None:
        sampling = {**sampling, "response_format": response_format(name, schema, length=length)}
    return await ask_until_readable(
        client, messages, sampling, version=version, read=read, repair=repair, retries=max_retries,
        reasoning_when_blank=True,
    )  # fmt: skip


def last_json(text: str, kind: type) -> Any:
    """The last JSON value of type ``kind`` (list or dict) in ``text``: fenced blocks first, then counted brackets."""
    return reply_json.last_json(text, kind, spans="counted")


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
