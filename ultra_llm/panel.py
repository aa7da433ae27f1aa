"""A panel of judgments: every item judged by each jury member, ``samples`` times each, members concurrently.

``run_panel(settings, cache, judge)`` calls ``judge(client)`` (a tool's judging coroutine over all its items)
once per (member, sample) of ``settings.panel()``. Each member has its own ``LLMClient`` (its endpoint or
pool, its ``max_workers`` slots, its batch passes) and all members run at the same time, so a jury of three
takes about as long as its slowest member. A member's samples share its client and slots; sample ``i``
sends ``seed`` + ``i`` (``SampleClient``), so each sample is its own request and its own cache entry, and
sample 0 is the request a run without samples sends. One answer cache serves every member: its key holds
the model, so each member's answers are its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ultra_llm.batch_mode.passes import in_passes
from ultra_llm.cache import AnswerCache, NoCache
from ultra_llm.client import LLMClient
from ultra_llm.completions import Completion
from ultra_llm.settings import LLMSettings

T = TypeVar("T")


class SampleClient:
    """A member's client for sample ``index``: every chat request carries ``seed`` + ``index``; the rest is the
    member's client (its slots, cache and counts)."""

    def __init__(self, client: LLMClient, index: int) -> None:
        self.client = client
        self.index = index

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def chat(self, messages: list[dict[str, Any]], sampling: dict[str, Any], *, prompt: str) -> Completion:
        """``client.chat`` with the sample's seed (sample 0 sends the request as it is)."""
        if self.index:
            sampling = {**sampling, "seed": int(sampling.get("seed") or 0) + self.index}
        return await self.client.chat(messages, sampling, prompt=prompt)


@dataclass
class MemberRun(Generic[T]):
    """What one member judged: its name (the model), one result per sample, its usage and dropped parameters."""

    member: str
    samples: list[T]
    usage: dict[str, Any]
    dropped: list[str]


async def run_panel(
    settings: LLMSettings,
    cache: AnswerCache | NoCache,
    judge: Callable[[Any], Awaitable[T]],
    *,
    progress: Any = None,
) -> list[MemberRun[T]]:
    """``judge(client)`` for every (member, sample) of ``settings``, members concurrently (see the module)."""

    async def member_run(member: LLMSettings) -> MemberRun[T]:
        async with LLMClient(member, cache) as client:
            clients = [client if i == 0 else SampleClient(client, i) for i in range(settings.samples)]
            results = await in_passes(
                client, lambda: asyncio.gather(*(judge(sample) for sample in clients)), progress=progress
            )
            return MemberRun(member.model_id, list(results), client.usage.as_dict(), sorted(client.dropped))

    return list(await asyncio.gather(*(member_run(member) for member in settings.members())))


def total_usage(runs: list[MemberRun[Any]]) -> dict[str, Any]:
    """The members' usage summed (``sum_usage``), with each member's own under ``members``."""
    if len(runs) == 1:
        return runs[0].usage
    return {**sum_usage([run.usage for run in runs]), "members": {run.member: run.usage for run in runs}}


def sum_usage(usages: list[dict[str, Any]]) -> dict[str, Any]:
    """Usage dicts (``Usage.as_dict``) added up: the counts, and the per-endpoint counts endpoint by endpoint."""
    total: dict[str, Any] = {}
    for usage in usages:
        for key, value in usage.items():
            if key == "endpoints":
                for endpoint, counts in value.items():
                    mine = total.setdefault(key, {}).setdefault(endpoint, dict.fromkeys(counts, 0))
                    for name, count in counts.items():
                        mine[name] = mine.get(name, 0) + count
            elif key == "members":
                total.setdefault(key, {}).update(value)
            elif isinstance(value, (int, float)):
                total[key] = total.get(key, 0) + value
    return total
