"""A pool of OpenAI-compatible endpoints serving one model: routing, capacity and draining.

A request goes to the endpoint with the fewest outstanding requests relative to its capacity
(``max_concurrency`` times ``weight``), among those with a free slot. An endpoint whose requests
fail ``drain_after`` times in a row (time-outs, refused connections, 429, 5xx) is drained: it gets
no requests for ``cool_down`` seconds, and the requests it failed are retried on the others. When
every endpoint is full or drained, a request waits for the first free slot. A single endpoint is a
pool of one, so the online client always routes through here.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from ultra_llm.completions import Usage
from ultra_llm.endpoint_errors import host_port
from ultra_llm.settings import Endpoint

log = logging.getLogger("ultra.llm")

Outcome = Literal["ok", "retry", "fail", "cancelled"]


@dataclass(eq=False)
class Member:
    """One endpoint of the pool and what the pool knows about it now."""

    endpoint: Endpoint
    label: str
    outstanding: int = 0
    failures_in_row: int = 0
    drained_until: float = 0.0
    client: Any = field(default=None, repr=False)  # the endpoint's openai client, made on first use

    @property
    def capacity(self) -> int:
        return self.endpoint.max_concurrency

    def load(self) -> float:
        """Outstanding requests (with the next one) relative to the weighted capacity."""
        return (self.outstanding + 1) / (self.capacity * self.endpoint.weight)


class EndpointPool:
    """Least-loaded routing over ``endpoints``, with draining; counts go to ``usage.endpoints``."""

    def __init__(self, endpoints: tuple[Endpoint, ...], *, drain_after: int, cool_down: float, usage: Usage) -> None:
        self.members = [Member(e, label) for e, label in zip(endpoints, labels(endpoints), strict=True)]
        self.drain_after = drain_after
        self.cool_down = cool_down
        self.usage = usage
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def acquire(self, avoid: Member | None = None) -> Member:
        """A slot on the least-loaded healthy endpoint (``avoid``: the one that just failed, if another is free)."""
        while True:
            member = self._pick(avoid)
            if member is not None:
                member.outstanding += 1
                self.usage.count(member.label, "requests")
                return member
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake()  # pass the wake-up on: this waiter no longer needs it
                raise

    def release(self, member: Member, outcome: Outcome) -> None:
        """Free the slot; ``retry`` outcomes in a row drain the endpoint, ``ok`` resets the count."""
        member.outstanding -= 1
        if outcome == "ok":
            member.failures_in_row = 0
            self.usage.count(member.label, "ok")
        elif outcome in ("retry", "fail"):
            self.usage.count(member.label, "failed")
        if outcome == "retry" and len(self.members) > 1:
            member.failures_in_row += 1
            if self.drain_after and member.failures_in_row >= self.drain_after and not self.draining(member):
                self._drain(member)
        self._wake()

    def draining(self, member: Member) -> bool:
        return member.drained_until > time.monotonic()

    def healthy_elsewhere(self, member: Member) -> bool:
        """Whether another endpoint can take a request now (then a failed request is retried there at once)."""
        return any(m is not member and not self.draining(m) for m in self.members)

    def _pick(self, avoid: Member | None) -> Member | None:
        now = time.monotonic()
        best, fallback = None, None
        for member in self.members:
            if member.outstanding >= member.capacity or member.drained_until > now:
                continue
            if member is avoid:
                fallback = member
                continue
            if best is None or member.load() < best.load():
                best = member
        return best or fallback

    def _drain(self, member: Member) -> None:
        member.drained_until = time.monotonic() + self.cool_down
        member.failures_in_row = 0
        self.usage.count(member.label, "drained")
        log.warning(
            "endpoint %s failed %d requests in a row: drained for %g s, its requests go to the others",
            member.label,
            self.drain_after,
            self.cool_down,
        )
        # requests waiting only for this endpoint's slots must look again when it comes back
        asyncio.get_running_loop().call_later(self.cool_down, self._wake_all)

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _wake_all(self) -> None:
        for _ in range(sum(m.capacity for m in self.members)):
            self._wake()

    async def aclose(self) -> None:
        """Close every endpoint's HTTP connections."""
        for member in self.members:
            if member.client is not None:
                await member.client.close()
                member.client = None


def labels(endpoints: tuple[Endpoint, ...]) -> list[str]:
    """``host:port`` of each endpoint (never a key or a path); repeated ones get ``#2``, ``#3`` ..."""
    seen: collections.Counter[str] = collections.Counter()
    names = []
    for endpoint in endpoints:
        name = host_port(endpoint.base_url)
        seen[name] += 1
        names.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return names
