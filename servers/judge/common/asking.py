"""How the judge asks: its sampling, a prompt file filled and asked for its declared ``Reply``, JSON in a reply.

Shared by ``nuggets`` and the answer judges. The ask-read-repair loop is the LLM library's
(``ultra_llm.asking``): the ``Reply`` (``ultra_llm.replies``) reads the reply text into a value or
raises ``Unreadable`` with the reason; after ``max_retries`` repairs the item is reported as a
``parse_error`` with the raw reply. Transport failures come back as ``error``. Nothing unreadable is
ever turned into a value. With structured output (``judge_llm.structured_output``; always with the
local backend) each request carries the reply's schema as ``response_format``, named after the prompt.
"""

from __future__ import annotations

from typing import Any

from servers.judge.common.prompting import Prompt, Prompts
from ultra_llm.asking import Answer, ask_until_readable
from ultra_llm.client import LLMClient
from ultra_llm.replies import Reply, Unreadable
from ultra_llm.replies import json_text as reply_json

__all__ = ["SAMPLING", "Answer", "Prompts", "Reply", "Unreadable", "ask", "last_json"]

# Judges' sampling: deterministic where the endpoint allows it.
SAMPLING = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1024, "seed": 42}


async def ask(
    client: LLMClient,
    prompts: Prompts,
    prompt: Prompt | str,
    reply: Reply,
    *,
    max_retries: int,
    sampling: dict[str, Any] | None = None,
    length: int | None = None,
    **values: Any,
) -> Answer:
    """One judged item: the prompt (a ``Prompt``, or the name of one of ``prompts``: the call's override, else the
    file in ``prompts/``) filled with ``values`` in the call's language, asked for ``reply`` and repaired up to
    ``max_retries`` times (a blank reply is read from the reasoning).

    ``length``: the number of items each list of the reply must hold (one verdict per statement).
    """
    prompt = prompts.load(prompt) if isinstance(prompt, str) else prompt
    messages = prompts.messages(prompt, values)  # with the language line (the `language` setting)
    return await ask_until_readable(
        client, messages, SAMPLING if sampling is None else sampling, version=prompt.version,
        reply=reply, retries=max_retries, reasoning_when_blank=True, length=length,
    )  # fmt: skip


def last_json(text: str, kind: type) -> Any:
    """The last JSON value of type ``kind`` (list or dict) in ``text``: fenced blocks first, then counted brackets."""
    return reply_json.last_json(text, kind, spans="counted")
