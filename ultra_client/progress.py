"""Render MCP progress notifications as a one-line progress bar on stderr."""

from __future__ import annotations

import sys
import time
from typing import TextIO

BAR_WIDTH = 30


class ProgressBar:
    """An async progress callback for one step: a redrawn bar on a terminal, throttled lines otherwise."""

    def __init__(self, label: str, stream: TextIO | None = None, min_interval: float = 1.0) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self.min_interval = min_interval
        self._last = 0.0
        self.drawn = False

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        now = time.monotonic()
        finished = total is not None and progress >= total
        if not self.interactive and not finished and now - self._last < self.min_interval:
            return
        self._last = now
        self.stream.write(
            ("\r" if self.interactive else "")
            + self.render(progress, total, message)
            + ("" if self.interactive else "\n")
        )
        self.stream.flush()
        self.drawn = True

    def render(self, progress: float, total: float | None, message: str | None) -> str:
        """The bar text: ``label [#####.....]  50% (5/10) message``."""
        note = f" {message}" if message else ""
        if not total:
            return f"  {self.label}: {progress:g}{note}"
        fraction = max(0.0, min(1.0, progress / total))
        filled = int(round(fraction * BAR_WIDTH))
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        return f"  {self.label} [{bar}] {fraction:4.0%} ({progress:g}/{total:g}){note}"

    def close(self) -> None:
        """End the bar's line on a terminal."""
        if self.drawn and self.interactive:
            self.stream.write("\n")
            self.stream.flush()
