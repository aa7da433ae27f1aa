"""Render MCP progress notifications as a one-line progress bar on stderr."""

from __future__ import annotations

import sys
import time
from typing import TextIO

BAR_WIDTH = 30


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

    def __init__(self, label: str, stream: TextIO | None = None, min_interval: float = 1.0) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self.min_interval = min_interval
        self._last = 0.0
        self.drawn = False
        self.started = time.monotonic()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        now = time.monotonic()
        finished = total is not None and progress >= total
        if not self.interactive and not finished and now - self._last < self.min_interval:
            return
        self._last = now
        self.stream.write(
            ("\r" if self.interactive else "")
            + self.render(progress, total, message, now - self.started)
            + (CLEAR_TO_END if self.interactive else "\n")
        )
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
