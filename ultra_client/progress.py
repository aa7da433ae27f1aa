"""Render MCP progress notifications as a one-line progress bar on stderr."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import TextIO

BAR_WIDTH = 30
HEARTBEAT = 10.0  # seconds a step may stay silent before its line shows it still working, with the time so far
QUIET_LINES = 30.0  # then, when stderr is not a terminal, seconds between such lines (a terminal redraws each second)


CLEAR_TO_END = "\x1b[K"  # erase the rest of the terminal line (what a shorter redraw would leave behind)
SAME_MOMENT = 0.25  # seconds: counts reported this soon after a completion began are the same completion (a batch)


def clock(seconds: float) -> str:
    """``75.2`` -> ``1:15``; ``3725`` -> ``1:02:05``."""
    whole = int(max(0.0, seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Eta:
    """The time a step has left, at the rate its work completes from its first completion on.

    A local model answers 8 prompts at once: the step reports 8 counts at one moment, then nothing until the next
    batch, and before the first batch it loads the model. The rate over the whole time since the step started
    counts that loading as work, and the first of the 8 counts as all the work done: it overstated the time left
    80-fold after SmolLM2's first batch (``ETA 11:09`` for 8 seconds left). So the counts reported within
    ``same_moment`` seconds of a completion's first count are one completion; the rate is the work done before the
    latest completion and not before the first (what completes at a completion was done before it) over the time
    between them; and there is no ETA until a second completion gives a rate. A new total or a count going back
    (another phase of the step) starts a new rate.
    """

    def __init__(self, same_moment: float = SAME_MOMENT) -> None:
        self.same_moment = same_moment
        self.total: float | None = None
        self.last = 0.0  # the count last reported
        self.first: tuple[float, float] | None = None  # (when, count done before it) of the first completion
        self.latest: tuple[float, float] | None = None  # the same of the latest completion

    def observe(self, now: float, progress: float, total: float | None) -> None:
        """A count reported at ``now``."""
        if progress < self.last or (self.total is not None and total != self.total):
            self.first = self.latest = None
            self.last = progress  # work done before this report, at a time unknown: no part of the rate
        self.total = total
        if progress > self.last and (self.latest is None or now - self.latest[0] >= self.same_moment):
            self.latest = (now, self.last)
            self.first = self.first or self.latest
        self.last = progress

    def left(self, now: float, progress: float, total: float | None) -> float | None:
        """Seconds left at ``now`` with ``progress`` of ``total`` done; None until a rate is known."""
        if not total or self.first is None or self.latest is None:
            return None
        (began, before), (latest, done) = self.first, self.latest
        if done <= before or latest <= began:
            return None
        return max(0.0, (total - progress) * (latest - began) / (done - before) - (now - latest))


class ProgressBar:
    """An async progress callback for one step: a redrawn bar on a terminal, throttled lines otherwise.

    Each line shows the time since the step started and, once two completions against a total give a rate,
    an ETA (``Eta``). On a terminal each redraw clears the rest of the line. In a log, a completion's line is
    written once its counts are in (``same_moment`` after its first) and at most one a ``min_interval``, showing the
    latest count: a batch of 8 counts at one moment wrote its first and dropped the 7 others, so the log said 1 done
    while 8 were until the next batch. ``timer``: the time source (a line owed is also written at the next report
    after it was due, as of then, which a fake clock in tests relies on).
    """

    def __init__(
        self,
        label: str,
        stream: TextIO | None = None,
        min_interval: float = 1.0,
        heartbeat: float = HEARTBEAT,
        quiet_lines: float = QUIET_LINES,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self.min_interval = min_interval
        self.heartbeat, self.quiet_lines = heartbeat, quiet_lines
        self._last = 0.0
        self.drawn = False
        self.timer = timer
        self.eta = Eta()
        self.started = timer()
        self.state: tuple[float, float | None, str | None] | None = None  # the last progress the tool reported
        self._news = self.started  # when the tool last reported
        self._due: float | None = None  # in a log: when the line of the counts not yet written is due
        self._due_call: asyncio.TimerHandle | None = None

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        now = self.timer()
        if self._due is not None and now >= self._due:
            self._say(self._due)  # the earlier counts' line, as of when it was due, before this report
        self.state, self._news = (progress, total, message), now
        self.eta.observe(now, progress, total)
        if self.interactive or (total is not None and progress >= total):
            self._say(now)
        elif self._due is None:
            self._due = max(now + self.eta.same_moment, self._last + self.min_interval)
            self._due_call = asyncio.get_running_loop().call_later(self._due - now, self._say_due)

    def _say_due(self) -> None:
        if self._due is not None:
            self._say(self._due)

    def _say(self, now: float) -> None:
        """Write the latest count's line as of ``now``; no line is owed after it."""
        if self._due_call is not None:
            self._due_call.cancel()
        self._due = self._due_call = None
        self._last = now
        self._write(self.render(*self.state, now - self.started, self.eta.left(now, *self.state[:2])))

    async def keep_alive(self) -> None:
        """Until cancelled: after ``heartbeat`` seconds without news (a model loading, a first batch of a slow local
        model), the line again with the time so far, then each second on a terminal or every ``quiet_lines`` seconds
        in a log, until the tool reports again: a long step is never silent."""
        while True:
            await asyncio.sleep(min(1.0, self.heartbeat))
            now = self.timer()
            if now - self._news < self.heartbeat:
                continue
            again = 1.0 if self.interactive else self.quiet_lines
            if self._last > self._news and now - self._last < again:  # said since the news: not yet again
                continue
            if self.state:
                self._say(now)
            else:
                self._last = now
                self._write(f"  {self.label}: working, {clock(now - self.started)} elapsed")

    def _write(self, text: str) -> None:
        self.stream.write(("\r" if self.interactive else "") + text + (CLEAR_TO_END if self.interactive else "\n"))
        self.stream.flush()
        self.drawn = True

    def render(
        self, progress: float, total: float | None, message: str | None, elapsed: float = 0.0, left: float | None = None
    ) -> str:
        """The bar text: ``label [#####.....]  50% (5/10) 0:12 elapsed, ETA 0:12 message`` (``left``: the ETA's
        seconds, None for none)."""
        note = f" {message}" if message else ""
        if not total:
            return f"  {self.label}: {progress:g} {clock(elapsed)} elapsed{note}"
        fraction = max(0.0, min(1.0, progress / total))
        filled = int(round(fraction * BAR_WIDTH))
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        timing = f"{clock(elapsed)} elapsed"
        if left is not None and fraction < 1:
            timing += f", ETA {clock(left)}"
        return f"  {self.label} [{bar}] {fraction:4.0%} ({progress:g}/{total:g}) {timing}{note}"

    def close(self) -> None:
        """Write the line a log is owed (the step ended before it was due), or end the bar's line on a terminal."""
        if self._due is not None:
            self._say(self.timer())
        if self.drawn and self.interactive:
            self.stream.write("\n")
            self.stream.flush()
