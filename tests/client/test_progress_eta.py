"""The ETA of a step whose work completes in batches (a local model answers 8 prompts at once), on a fake clock."""

from __future__ import annotations

import asyncio
import io
import re

from ultra_client.progress import Eta, ProgressBar

ETA = re.compile(r"\((\d+)/(\d+)\) (\d+):(\d\d)(?::(\d\d))? elapsed(?:, ETA (\d+):(\d\d)(?::(\d\d))?)?")


class Clock:
    """A time source the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def seconds(*parts: str | None) -> int:
    """``("1", "02", "05")`` (h:mm:ss) or ``("2", "05", None)`` (m:ss) -> seconds."""
    numbers = [int(p) for p in parts if p is not None]
    return sum(n * 60**i for i, n in enumerate(reversed(numbers)))


def batched_run(total: int, batch: int, load: float, per_batch: float, spread: float) -> tuple[list[str], list[float]]:
    """The lines a log (not a terminal) gets for a step that loads its model for ``load`` seconds, then finishes
    ``batch`` items every ``per_batch`` seconds, each batch's counts reported ``spread`` seconds apart (the
    notifications of one batch arrive one after another); and when each count was reported (index: the count)."""
    clock = Clock()
    reported = [clock.now]
    stream = io.StringIO()
    bar = ProgressBar("generation.generate", stream=stream, timer=clock)

    async def run() -> None:
        await bar(0, total, "generating (loading the local model first)")
        clock.now += load
        done = 0
        while done < total:
            clock.now += per_batch
            for _ in range(min(batch, total - done)):
                done += 1
                reported.append(clock.now)
                await bar(done, total, f"answered {done}/{total}")
                clock.now += spread

    asyncio.run(run())
    return stream.getvalue().splitlines(), reported


def test_the_eta_of_batches_of_8_is_the_time_the_batches_left_take() -> None:
    """1000 prompts, a model loading for 20 s, then 8 answers every 2.5 s: 5:12 left after the first batch.
    The rate over everything so far (22.5 s for the 1 item of the first line) said 6 hours."""
    lines, reported = batched_run(1000, 8, load=20.0, per_batch=2.5, spread=0.01)
    parsed = [ETA.search(line) for line in lines]
    assert all(parsed), lines
    first_batch = [m for m in parsed if m.group(1) != "0"][0]
    # The batch's line shows its 8 counts (it showed the first, 1, and dropped 7); one completion: no rate, no ETA.
    assert first_batch.group(1) == "8" and first_batch.group(6) is None
    assert [int(m.group(1)) for m in parsed] == list(range(0, 1001, 8)), lines  # a line a batch, its last count
    checked = 0
    for match in parsed:
        done, total = int(match.group(1)), int(match.group(2))
        if match.group(6) is None:
            continue
        shown = seconds(match.group(6), match.group(7), match.group(8))
        true_left = reported[-1] - reported[done]
        assert 0.9 * true_left - 2 <= shown <= 1.1 * true_left + 3, (match.group(0), true_left)
        assert done < total
        checked += 1
    assert checked > 100  # a line a batch (the log is throttled to a line a second)
    assert lines[-1].endswith("(1000/1000) 5:42 elapsed answered 1000/1000")  # 20 s + 125 x (2.5 + 8 x 0.01) s


def test_one_item_at_a_time_gives_the_exact_time_left_from_the_second_item() -> None:
    clock = Clock()
    eta = Eta()
    for done in range(1, 4):  # an item every 3 s, the first after a 40 s start
        clock.now += 40.0 if done == 1 else 3.0
        eta.observe(clock.now, done, 10)
        left = eta.left(clock.now, done, 10)
        assert left is None if done == 1 else left == 3.0 * (10 - done)
    assert eta.left(clock.now + 5.0, 3, 10) == 21.0 - 5.0  # counted down while nothing is reported
    assert eta.left(clock.now + 60.0, 3, 10) == 0.0


def test_a_new_total_starts_a_new_rate() -> None:
    """A step of two phases (nuggets: a count per query, then per answer): the first phase's rate is not the
    second's, and the work of the first phase is not counted as done in the second's time."""
    eta = Eta()
    for when, done in ((10.0, 1), (11.0, 2), (12.0, 3)):
        eta.observe(when, done, 3)
    assert eta.left(12.0, 3, 3) == 0.0
    eta.observe(12.5, 3, 40)  # the second phase: 3 of 40 counted already, and none of it timed
    assert eta.left(12.5, 3, 40) is None
    eta.observe(20.0, 4, 40)  # its first completion
    assert eta.left(20.0, 4, 40) is None
    eta.observe(30.0, 5, 40)  # its second: 10 s an item
    assert eta.left(30.0, 5, 40) == 350.0
