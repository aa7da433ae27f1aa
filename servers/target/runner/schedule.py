"""Every item of a run: conversations at once (up to ``max_workers`` requests in flight), the turns of one
conversation one after another, each answer journaled as it arrives and resumed items not asked again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from servers.target.conversations import Plan
from servers.target.kinds.base import Asker, TurnRequest
from servers.target.records.cache import ReplyCache, cache_key
from servers.target.records.journal import Journal
from servers.target.records.results import record_of
from servers.target.runner.calls import Policy, RateLimiter, ask_once


@dataclass
class Run:
    """What one run needs besides the plan."""

    asker: Asker
    policy: Policy
    target: dict[str, Any]  # for the cache key
    settings: dict[str, Any]  # target.settings, sent with each turn
    max_answer_chars: int
    journal: Journal | None
    cache: ReplyCache | None
    on_done: Callable[[int, int], Awaitable[None]] | None = None


PROGRESS_SECONDS = 0.5  # ``on_done`` is called at most this often (and for the last item)


async def ask_all(plan: Plan, run: Run) -> tuple[list[dict[str, Any]], list[bytes | None], int]:
    """The record of every item in input order, its journal line (None where the journal has none: resumed
    items, or no journal), and how many were resumed from the journal."""
    resumed = run.journal.completed() if run.journal is not None else {}
    records: list[dict[str, Any] | None] = [None] * len(plan.items)
    lines: list[bytes | None] = [None] * len(plan.items)
    for item in plan.items:
        if item.id in resumed:
            records[item.index] = {**resumed[item.id], "index": item.index, "resumed": True}
    limiter = RateLimiter(run.policy.rate_limit)
    slots = asyncio.Semaphore(max(1, run.policy.max_workers))
    done = sum(r is not None for r in records)
    reported = 0.0  # when on_done was last called

    def answer_of(index: int) -> str:
        record = records[index]
        return (record or {}).get("answer") or ""

    async def ask_turn(index: int, earlier: list[int], turn: int) -> None:
        nonlocal done, reported
        item = plan.items[index]
        history = plan.history_of(item, [plan.items[i] for i in earlier], answer_of)
        request = TurnRequest(item.question, item.id, history, run.settings)
        key = cache_key(run.target, item.question, item.id, history) if run.cache is not None else ""
        hit = run.cache.get(key) if run.cache is not None else None
        if hit is not None:
            record = {**record_of(item, turn, _cached_outcome(), max_answer_chars=run.max_answer_chars,
                                  history_turns=len(history)), **hit, "cached": True}  # fmt: skip
        else:
            outcome = await ask_once(run.asker, request, run.policy, limiter, slots)
            record = record_of(item, turn, outcome, max_answer_chars=run.max_answer_chars,
                               history_turns=len(history))  # fmt: skip
            if run.cache is not None and record["status"] == "ok":
                run.cache.put(key, record)
        records[index] = record
        if run.journal is not None:
            lines[index] = run.journal.append(record)
        done += 1
        if run.on_done is not None and (done == len(records) or time.monotonic() - reported >= PROGRESS_SECONDS):
            reported = time.monotonic()
            await run.on_done(done, len(records))

    async def thread(indices: list[int]) -> None:  # history: own, each turn waits for the one before
        for turn, index in enumerate(indices):
            if records[index] is None:
                await ask_turn(index, indices[:turn], turn)

    if plan.history == "own":
        await asyncio.gather(*(thread(indices) for indices in plan.threads))
    else:  # history: reference needs no earlier answer: every turn at once
        await asyncio.gather(*(ask_turn(index, t[:k], k) for t in plan.threads for k, index in enumerate(t)
                               if records[index] is None))  # fmt: skip
    kept = [i for i, r in enumerate(records) if r is not None]
    return [records[i] for i in kept], [lines[i] for i in kept], sum(item.id in resumed for item in plan.items)


def _cached_outcome() -> Any:
    from servers.target.kinds.base import TargetReply
    from servers.target.runner.calls import Outcome

    return Outcome(TargetReply(""), None, 0.0, 0)
