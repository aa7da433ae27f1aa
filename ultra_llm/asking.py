"""Ask for a reply that a reader can use; when it cannot, ask again with a repair message, a bounded number of times.

The judge and synth servers ask this way. A reader turns the reply text into a value or raises
``Unreadable`` with the reason; after ``retries`` repairs the item is a ``parse_error`` carrying the
raw reply, and a request that got no reply is an ``error``. Nothing unreadable becomes a value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ultra_llm.client import LLMClient
from ultra_llm.reply_json import Unreadable


@dataclass
class Answer:
    """The value read from a reply, or why there is none; the requests it took and whether all came from the cache."""

    status: Literal["ok", "parse_error", "error"]
    value: Any = None
    raw: str | None = None
    error: str | None = None
    requests: int = 0
    cached: bool = True


async def ask_until_readable(
    client: LLMClient,
    messages: list[dict[str, str]],
    sampling: dict[str, Any],
    *,
    version: str,
    read: Callable[[str], Any],
    repair: str,
    retries: int,
    reasoning_when_blank: bool,
) -> Answer:
    """Ask with ``messages`` and ``read`` the reply; an ``Unreadable`` reply is asked again up to ``retries`` times.

    ``version``: the prompt's ``name@hash`` (part of the cache key). ``repair``: what the repair message asks
    for after the reason. ``reasoning_when_blank``: read the model's reasoning when the reply text is blank
    (the judge, so a grade a reasoning model left there counts); otherwise a blank reply is read as it is.
    """
    requests, cached = 0, True
    for attempt in range(retries + 1):
        reply = await client.chat(messages, sampling, prompt=version)
        requests += reply.attempts
        cached = cached and reply.cached
        if reply.status != "ok":
            return Answer("error", error=reply.error, requests=requests, cached=cached)
        text = reply.text if reply.text.strip() or not reasoning_when_blank else (reply.reasoning or "")
        try:
            return Answer("ok", read(text), requests=requests, cached=cached)
        except Unreadable as exc:
            reason = str(exc)
        if attempt == retries:
            error = f"unreadable after {attempt + 1} replies: {reason}"
            return Answer("parse_error", raw=reply.text, error=error, requests=requests, cached=cached)
        note = f"Your reply could not be used: {reason}. {repair}"
        messages = [*messages, {"role": "assistant", "content": reply.text}, {"role": "user", "content": note}]
    raise AssertionError("unreachable")  # pragma: no cover
