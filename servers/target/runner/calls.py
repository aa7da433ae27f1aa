"""One request to the target: the rate limit, the time-out, retries with back-off on 429, 5xx, time-outs and
dropped connections (``Retry-After`` honoured), and the latency of the attempt that answered."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from servers.target.kinds.base import Asker, TargetCallError, TargetReply, TurnRequest

BACKOFF_FIRST = 0.5  # seconds before the first retry when the reply names no Retry-After ...
BACKOFF_MAX = 30.0  # ... doubled each time up to this; a Retry-After longer than this is cut to it


@dataclass(frozen=True)
class Policy:
    """The runner's settings: per-request time-out, concurrency, requests per second, retries."""

    timeout: float
    max_workers: int
    rate_limit: float  # 0 = none
    max_retries: int


@dataclass
class Outcome:
    """One item's end: the reply, or the last error; the answering attempt's seconds; attempts made."""

    reply: TargetReply | None
    error: TargetCallError | None
    latency: float | None
    attempts: int


class RateLimiter:
    """Starts at most ``rate`` requests per second (evenly spaced); 0 means no limit."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


async def ask_once(asker: Asker, request: TurnRequest, policy: Policy, limiter: RateLimiter,
                   slots: asyncio.Semaphore) -> Outcome:  # fmt: skip
    """Ask ``request`` with retries; never raises a ``TargetCallError`` (it is in the outcome)."""
    attempts = 0
    while True:
        attempts += 1
        async with slots:
            if limiter.interval:
                await limiter.wait()
            started = time.perf_counter()
            try:
                reply = await _within(asker.ask(request), policy.timeout)
                return Outcome(reply, None, time.perf_counter() - started, attempts)
            except asyncio.TimeoutError:
                error = TargetCallError("timeout", f"no complete reply within {policy.timeout:g} s", retryable=True)
            except TargetCallError as exc:
                error = exc
        if not error.retryable or attempts > policy.max_retries:
            return Outcome(None, error, None, attempts)
        await asyncio.sleep(backoff(attempts, error.retry_after))


async def _within(call: Coroutine[Any, Any, TargetReply], seconds: float) -> TargetReply:
    """``await call`` cancelled after ``seconds`` (``asyncio.TimeoutError``): in this task where Python has
    ``asyncio.timeout`` (3.11), where ``wait_for`` made a task per request."""
    if _timeout is None:
        return await asyncio.wait_for(call, timeout=seconds)
    async with _timeout(seconds):
        return await call


_timeout = getattr(asyncio, "timeout", None)


def backoff(attempt: int, retry_after: float | None) -> float:
    """Seconds to wait before retry ``attempt`` (1-based): ``Retry-After`` when given, else doubling from 0.5 s."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), BACKOFF_MAX)
    return min(BACKOFF_FIRST * 2 ** (attempt - 1), BACKOFF_MAX)
