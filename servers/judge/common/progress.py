"""Progress of an LLM judge: one count over every (item, jury member, sample), reported through MCP.

A tool face turns its ``Context`` into a callback (``reporter``: ``judged 12/40 answers``); the judge counts
one step per item judged by any member and sample (``panel_progress``, ``ticked``), so a jury of 3 with 2
samples over 40 items reports up to 240, and ``ultra run`` / ``ultra call`` draw the bar from it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ultra_llm.settings import LLMSettings

Progress = Callable[[int, int], Awaitable[None] | None]
T = TypeVar("T")


def reporter(ctx: Any | None, noun: str) -> Progress | None:
    """``ctx.report_progress`` as a ``(done, total)`` callback saying ``judged done/total <noun>``; None without
    a context (a Python caller)."""
    if ctx is None:
        return None

    async def report(done: int, total: int) -> None:
        await ctx.report_progress(done, total, f"judged {done}/{total} {noun}")

    return report


def panel_progress(progress: Progress | None, total: int, start: int = 0) -> Progress | None:
    """One count over every (member, sample) run: ``progress(done, total)`` as each of ``total`` steps ends
    (``start``: steps an earlier stage counted, so the count only grows)."""
    if progress is None:
        return None
    done = start

    async def step(_done: int = 0, _total: int = 0) -> None:
        nonlocal done
        done += 1
        result = progress(done, total)
        if asyncio.iscoroutine(result):
            await result

    return step


def panel_steps(progress: Progress | None, items: int, settings: LLMSettings) -> Progress | None:
    """``panel_progress`` over ``items`` judged by each member of ``settings``, each ``samples`` times."""
    return panel_progress(progress, items * len(settings.members()) * settings.samples)


async def ticked(step: Progress | None, work: Awaitable[T]) -> T:
    """``work``'s result, counting one step when it is done."""
    result = await work
    if step is not None:
        counted = step(0, 0)
        if asyncio.iscoroutine(counted):
            await counted
    return result
