"""A record's ``start_time`` is what ``datetime`` writes for its root's start, to the millisecond, on the edges of
its rounding (to the microsecond, ties to even) too."""

from __future__ import annotations

import random
from datetime import datetime, timezone

from servers.benchmark.traces.assemble import _iso_time


def test_start_time_as_datetime_writes_it() -> None:
    rng = random.Random(3)
    edges = [0.0, 0.0005, 0.0004999, 0.9999995, 0.9999994999, 86399.9999996, 1700000000.9995, 5e-7, 1.5e-6, 2.5e-6]
    nanos = [rng.randint(1_600_000_000 * 10**9, 1_800_000_000 * 10**9) / 1e9 for _ in range(20_000)]
    halves = [rng.randint(0, 4 * 10**9) + rng.randint(0, 10**6) / 1e6 + 5e-7 for _ in range(20_000)]
    before_1970 = [-1.25, -86400.0005, -rng.uniform(0, 1e9)]
    for seconds in edges + nanos + halves + before_1970:
        assert _iso_time(seconds) == datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")
    assert _iso_time(1700000000.9999996) == "2023-11-14T22:13:21.000+00:00"  # rounded up into the next second
