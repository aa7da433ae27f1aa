"""Independent set-up commands run at once: each call (a blocking subprocess run, say) in its own thread, so that a
fixture's runs take as long as the slowest of them, not the sum. Every call still runs and asserts as before."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

K = TypeVar("K")
T = TypeVar("T")


def at_once(calls: dict[K, Callable[[], T]]) -> dict[K, T]:
    """Each call's result by its key; the first failure (in ``calls``' order) is raised once all have ended."""
    with ThreadPoolExecutor(max_workers=max(1, len(calls))) as pool:
        futures = {key: pool.submit(call) for key, call in calls.items()}
    return {key: future.result() for key, future in futures.items()}
