"""Progress reports of a retriever tool, from the event loop (dense embedding) or a worker thread (BM25)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ultra_kit.progress import ProgressCallback, no_progress, progress_from_context

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


def context_progress(ctx: Context | None) -> ProgressCallback:
    """A progress callback usable from the event loop (dense embedding) and from worker threads (BM25)."""
    if ctx is None:
        return no_progress
    import asyncio

    from_thread = progress_from_context(ctx)
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task] = set()

    def report(done: float, total: float | None = None, message: str | None = None) -> None:
        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            task = loop.create_task(ctx.report_progress(done, total, message))
            tasks.add(task)  # keep a reference until it ran
            task.add_done_callback(tasks.discard)
        else:
            from_thread(done, total, message)

    return report
