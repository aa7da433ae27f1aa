"""What every kind of target shares: the request a turn sends, the reply it gets, and how a call fails.

A kind module (``servers/target/kinds/<kind>.py``) defines ``open_asker(target, context) -> Asker``.
The tool's runner owns concurrency, rate limit, retries, time-outs, latency and resume; a kind only
turns one ``TurnRequest`` into one ``TargetReply`` or raises ``TargetCallError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

# The reasons a call can fail, as recorded in a result record's ``error`` status.
FAILURE_REASONS = (
    "http_status",  # the system answered with a non-2xx status
    "timeout",  # no complete reply within ``timeout`` seconds
    "connection",  # refused, reset or dropped
    "unreadable",  # the reply is not what the configuration says (bad JSON, too large, too deep, cut stream)
    "missing_answer",  # the reply has no answer where ``answer`` points
    "target_error",  # the system's own code raised (python, langchain, llamaindex, mcp kinds)
)


@dataclass(frozen=True)
class TurnRequest:
    """One question sent to the system under test; ``history`` holds the earlier turns of its conversation."""

    question: str
    id: str
    history: tuple[Mapping[str, str], ...] = ()  # {"role": "user"|"assistant", "content": ...}, oldest first
    settings: Mapping[str, Any] = field(default_factory=dict)  # the target's ``settings`` mapping (e.g. top_k)


class Passage(NamedTuple):
    """A passage the system says it used; ``id`` and ``score`` only when it gives them (a named tuple: a reply
    of ten passages makes ten per request)."""

    text: str
    id: str | None = None
    score: float | None = None


@dataclass(frozen=True)
class TargetReply:
    """What the system answered: the answer, its passages in rank order, citations and token usage."""

    answer: str | None
    contexts: tuple[Passage, ...] = ()
    citations: tuple[Any, ...] = ()
    usage: Mapping[str, int] | None = None  # e.g. {"prompt_tokens": .., "completion_tokens": ..}


class TargetCallError(Exception):
    """One call failed: ``reason`` is one of FAILURE_REASONS; ``detail`` is safe to show (no secrets)."""

    def __init__(self, reason: str, detail: str, *, retryable: bool = False, retry_after: float | None = None) -> None:
        if reason not in FAILURE_REASONS:
            raise ValueError(f"unknown failure reason {reason!r}")
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.retryable = retryable  # 429, 5xx, dropped connection: worth another try
        self.retry_after = retry_after  # seconds, from a Retry-After header


@dataclass(frozen=True)
class KindContext:
    """What the runner gives a kind: where code may be imported from and the response limits."""

    read_roots: tuple[Path, ...]  # python / langchain / llamaindex targets import only from here
    timeout: float  # seconds per request
    max_response_bytes: int
    max_json_depth: int


class Asker(Protocol):
    """An open connection to the system under test."""

    async def ask(self, request: TurnRequest) -> TargetReply: ...

    async def aclose(self) -> None: ...
