"""Progress reporting that pure, synchronous code can call without knowing about MCP."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

ProgressCallback = Callable[[float, float | None, str | None], None]


def no_progress(done: float, total: float | None = None, message: str | None = None) -> None:
    """A progress callback that does nothing (the default for pure functions)."""


def progress_from_context(ctx: Any | None) -> ProgressCallback:
    """A thread-safe callback that forwards progress to an MCP ``Context`` from a worker thread.

    Sync tools run in anyio worker threads, so the notification is sent on the event loop through
    ``anyio.from_thread``. Without a context (a direct Python call) it does nothing.
    """
    if ctx is None:
        return no_progress
    import anyio.from_thread

    def report(done: float, total: float | None = None, message: str | None = None) -> None:
        # Outside a worker thread (on the loop itself) anyio raises RuntimeError: progress is best effort.
        with contextlib.suppress(RuntimeError):
            anyio.from_thread.run(ctx.report_progress, done, total, message)

    return report
