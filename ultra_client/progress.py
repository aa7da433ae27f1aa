"""Render MCP progress notifications as a one-line progress bar on stderr."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TextIO

BAR_WIDTH = 30
HEARTBEAT = 10.0  # seconds a step may stay silent before its line shows it still working, with the time so far
QUIET_LINES = 30.0  # then, when stderr is not a terminal, seconds between such lines (a terminal redraws each second)


CLEAR_TO_END = "\x1b[K"  # erase the rest of the terminal line (what a shorter redraw would leave behind)


def clock(seconds: float) -> str:
    """``75.2`` -> ``1:15``; ``3725`` -> ``1:02:05``."""
    whole = int(max(0.0, seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class ProgressBar:
    """An async progress callback for one step: a redrawn bar on a terminal, throttled lines otherwise.

    Each line shows the time since the step started and, once some progress is reported against
    a total, an ETA at the rate so far. On a terminal each redraw clears the rest of the line.
    """

    def __init__(
        self,
        label: str,
        stream: TextIO | None = None,
        min_interval: float = 1.0,
        heartbeat: float = HEARTBEAT,
        quiet_lines: float = QUIET_LINES,
    ) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self.min_interval = min_interval
        self.heartbeat, self.quiet_lines = heartbeat, quiet_lines
        self._last = 0.0
        self.drawn = False
        self.started = time.monotonic()
        self.state: tuple[float, float | None, str | None] | None = None  # the last progress the tool reported
        self._news = self.started  # when the tool last reported

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        now = time.monotonic()
        self.state, self._news = (progress, total, message), now
        finished = total is not None and progress >= total
        if not self.interactive and not finished and now - self._last < self.min_interval:
            return
        self._last = now
        self._write(self.render(progress, total, message, now - self.started))

    async def keep_alive(self) -> None:
        """Until cancelled: after ``heartbeat`` seconds without news (a model loading, a first batch of a slow local
        model), the line again with the time so far, then each second on a terminal or every ``quiet_lines`` seconds
        in a log, until the tool reports again: a long step is never silent."""
        while True:
            await asyncio.sleep(min(1.0, self.heartbeat))
            now = time.monotonic()
            if now - self._news < self.heartbeat:
                continue
            again = 1.0 if self.interactive else self.quiet_lines
            if self._last > self._news and now - self._last < again:  # said since the news: not yet again
                continue
            self._last = now
            elapsed = now - self.started
            self._write(
                self.render(*self.state, elapsed)
                if self.state
                else f"  {self.label}: working, {clock(elapsed)} elapsed"
            )

    def _write(self, text: str) -> None:
        self.stream.write(("\r" if self.interactive else "") + text + (CLEAR_TO_END if self.interactive else "\n"))
        self.stream.flush()
        self.drawn = True

    def render(self, progress: float, total: float | None, message: str | None, elapsed: float = 0.0) -> str:
        """The bar text: ``label [#####.....]  50% (5/10) 0:12 elapsed, ETA 0:12 message``."""
        note = f" {message}" if message else ""
        if not total:
            return f"  {self.label}: {progress:g} {clock(elapsed)} elapsed{note}"
        fraction = max(0.0, min(1.0, progress / total))
        filled = int(round(fraction * BAR_WIDTH))
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        timing = f"{clock(elapsed)} elapsed"
        if 0 < fraction < 1:
            timing += f", ETA {clock(elapsed * (1 - fraction) / fraction)}"
        return f"  {self.label} [{bar}] {fraction:4.0%} ({progress:g}/{total:g}) {timing}{note}"

    def close(self) -> None:
        """End the bar's line on a terminal."""
        if self.drawn and self.interactive:
            self.stream.write("\n")
            self.stream.flush()
