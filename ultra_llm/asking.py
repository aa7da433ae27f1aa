"""Ask for a reply that a reader can use; when it cannot, ask again with a repair message, a bounded number of times.

The judge and synth servers ask this way, each request with the prompt's declared ``Reply``
(``ultra_llm.replies``): its reader turns the reply text into a value or raises ``Unreadable`` with the
reason, its repair text says what to send instead, and with structured output (``settings.structured_output``)
its schema goes with every request as ``response_format``, named after the prompt. After ``retries``
repairs the item is a ``parse_error`` carrying the raw reply, and a request that got no reply is an
``error``. Nothing unreadable becomes a value.

No sticky failures: an unreadable reply an earlier online run left in the answer cache is not final. It is
asked for again (``LLMClient.chat(refresh=True)``), so a run against a fixed endpoint (same ``model_id``)
gets fresh replies, and the new answer replaces the stored one. Replies from batches and imported files
stay final (asking again would cost another batch round), as do this run's own. A ``parse_error`` whose
last reply came from the cache says so and how to bypass it (``from_cache_note``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ultra_llm.client import LLMClient
from ultra_llm.completions import Completion
from ultra_llm.replies import Reply, Unreadable


@dataclass
class Answer:
    """The value read from a reply, or why there is none; the requests it took and whether all came from the cache."""

    status: Literal["ok", "parse_error", "error"]
    value: Any = None
    raw: str | None = None
    error: str | None = None
    requests: int = 0
    cached: bool = True
    completion: Completion | None = None  # the reply that was read (ok): its text and token log-probabilities


async def ask_until_readable(
    client: LLMClient,
    messages: list[dict[str, str]],
    sampling: dict[str, Any],
    *,
    version: str,
    reply: Reply,
    retries: int,
    reasoning_when_blank: bool,
    length: int | None = None,
) -> Answer:
    """Ask with ``messages`` and read the reply as ``reply`` declares; an unreadable one is asked again up to
    ``retries`` times.

    ``version``: the prompt's ``name@hash`` (part of the cache key; its name names the schema). ``length``:
    the items the reply's lists must hold (one verdict per statement), in the schema, the reader and the
    repair text. ``reasoning_when_blank``: read the model's reasoning when the reply text is blank (the
    judge, so a grade a reasoning model left there counts); otherwise a blank reply is read as it is.
    """
    if client.settings.structured_output:
        wanted = reply.response_format(version.partition("@")[0], length=length)
        sampling = sampling if wanted is None else {**sampling, "response_format": wanted}
    requests, cached = 0, True
    for attempt in range(retries + 1):
        completion = await client.chat(messages, sampling, prompt=version)
        for refresh in (True, False):  # an unreadable reply from the cache is asked for again, once
            requests += completion.attempts
            cached = cached and completion.cached
            if completion.status != "ok":
                return Answer("error", error=completion.error, requests=requests, cached=cached)
            text = completion.text
            if reasoning_when_blank and not text.strip():
                text = completion.reasoning or ""
            try:
                value = reply.read(text, length=length)
                return Answer("ok", value, requests=requests, cached=cached, completion=completion)
            except Unreadable as exc:
                reason = str(exc)
            if completion.standin:  # ultra run --estimate: an example of the reply stands in, never a repair
                return example_answer(reply, length, requests)
            if not (refresh and completion.cached):
                break
            completion = await client.chat(messages, sampling, prompt=version, refresh=True)
        if attempt == retries:
            error = f"unreadable after {attempt + 1} replies: {reason}" + from_cache_note(client, completion)
            return Answer("parse_error", raw=completion.text, error=error, requests=requests, cached=cached)
        note = f"Your reply could not be used: {reason}. {reply.repair(length=length)}"
        messages = [*messages, {"role": "assistant", "content": completion.text}, {"role": "user", "content": note}]
    raise AssertionError("unreachable")  # pragma: no cover


def example_answer(reply: Reply, length: int | None, requests: int) -> Answer:
    """Under ``ultra run --estimate``: the reply's example read as a placeholder answer (an error when it has none)."""
    from ultra_llm.estimate import NOT_SENT

    try:
        text = reply.example(length=length)
        value = reply.read(text, length=length)
    except (ValueError, Unreadable):
        return Answer("error", error=NOT_SENT, requests=requests, cached=False)
    return Answer(
        "ok", value, requests=requests, cached=False, completion=Completion("ok", text, standin="placeholder")
    )


def from_cache_note(client: LLMClient, completion: Completion) -> str:
    """For an error about ``completion``: where it came from when that is the answer cache, and how to bypass it."""
    if not completion.cached or client.cache.path is None:
        return ""
    return (
        f" (the reply came from the answer cache {client.cache.path}; to ask the endpoint instead, "
        "set the tool's cache path, e.g. judge_cache, to '')"
    )
