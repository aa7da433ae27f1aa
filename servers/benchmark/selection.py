"""Choose which records to evaluate: filters, de-duplication and sampling (``benchmark.filters``,
``benchmark.dedup``, ``benchmark.sample``). Each record left out is counted by reason."""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from datetime import datetime, timezone
from typing import Any

from servers.benchmark.fields import MISSING, field_value
from ultra_base.errors import InputError

Record = dict[str, Any]
STRATEGIES = ("random", "stratified", "recent")
FILTERED = "filtered out"  # how the reason of a record dropped by a filter starts


def select(
    records: list[Record], filters: dict[str, Any], dedup: str, sample: dict[str, Any]
) -> tuple[list[Record], Counter[str]]:
    """The records that pass the filters, first of each repeated ``dedup`` value, then the sample."""
    dropped: Counter[str] = Counter()
    tests = _filter_tests(filters)
    kept = [] if tests else list(records)
    for record in records if tests else ():
        failed = next((reason for reason, test in tests if not test(record)), None)
        if failed:
            dropped[f"{FILTERED} ({failed})"] += 1
        else:
            kept.append(record)
    if dedup:
        seen: set[str] = set()
        unique = []
        for record in kept:
            key = repr(field_value(record, dedup))
            if key in seen:
                dropped[f"repeated {dedup} (dedup)"] += 1
            else:
                seen.add(key)
                unique.append(record)
        kept = unique
    sampled = _sample(kept, sample)
    if len(sampled) < len(kept):
        dropped[f"not in the sample ({sample['strategy']}, n={sample['n']})"] += len(kept) - len(sampled)
    return sampled, dropped


def _filter_tests(filters: dict[str, Any]) -> list[tuple[str, Any]]:
    tests: list[tuple[str, Any]] = []
    for bound, keep in (("since", lambda t, b: t >= b), ("until", lambda t, b: t < b)):
        if filters.get(bound):
            moment = _moment(filters[bound], f"benchmark.filters.{bound}")
            tests.append((f"{bound} {filters[bound]}", lambda r, m=moment, k=keep: k(_record_time(r), m)))
    for name, wanted in (filters.get("equals") or {}).items():
        tests.append((f"{name} = {wanted!r}", lambda r, n=name, w=wanted: field_value(r, n) == w))
    for name, pattern in (filters.get("matches") or {}).items():
        try:
            compiled = re.compile(str(pattern))
        except re.error as exc:
            raise InputError(f"benchmark.filters.matches.{name}: not a regular expression ({exc})") from None
        tests.append((f"{name} ~ {pattern!r}", lambda r, n=name, c=compiled: bool(c.search(str(field_value(r, n))))))
    if filters.get("errors_only"):
        tests.append(("errors_only", lambda r: bool(r.get("error"))))
    if filters.get("with_retrieval"):
        tests.append(("with_retrieval", lambda r: bool(r.get("contexts"))))
    return tests


def _moment(text: Any, setting: str) -> datetime:
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{setting} must be an ISO 8601 time such as 2025-01-31T00:00:00Z, not {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _record_time(record: Record) -> datetime:
    stamp = record.get("start_time")
    if not isinstance(stamp, str):
        raise InputError(f"filters since/until need a start_time on every record; line {record.get('_line')} has none")
    return _moment(stamp, "start_time")


def _sample(records: list[Record], sample: dict[str, Any]) -> list[Record]:
    n, strategy, by, seed = sample["n"], sample["strategy"], sample["by"], sample["seed"]
    if isinstance(n, bool) or not isinstance(n, int) or (n < 1 and n != -1):
        raise InputError(f"benchmark.sample.n must be -1 (every record) or a positive count, not {n!r}")
    if strategy not in STRATEGIES:
        raise InputError(f"benchmark.sample.strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    if strategy == "stratified" and not by:
        raise InputError("benchmark.sample.strategy stratified needs benchmark.sample.by (the field to stratify by)")
    if n == -1 or n >= len(records):
        return records
    if strategy == "recent":
        return sorted(records, key=lambda r: str(r.get("start_time") or ""))[-n:]
    rng = random.Random(seed)
    if strategy == "random":
        chosen = set(rng.sample(range(len(records)), n))
        return [r for i, r in enumerate(records) if i in chosen]
    strata: dict[str, list[int]] = defaultdict(list)
    for index, record in enumerate(records):
        value = field_value(record, by)
        strata[repr(None if value is MISSING else value)].append(index)
    chosen = set()
    for key in sorted(strata):  # each stratum in proportion to its size, at least one
        share = max(1, round(n * len(strata[key]) / len(records)))
        chosen.update(rng.sample(strata[key], min(share, len(strata[key]))))
    return [r for i, r in enumerate(records) if i in chosen]
