"""Latency as a metric: ``target.ask``'s records read as a per-item ``latency`` column (seconds, lower is better,
drawn as an ECDF), and the paired comparison of two runs' latency quantiles (p50, p95) with a bootstrap interval.

The records are the JSON Lines ``target.ask`` writes (``result_path``): one object per item with ``id``,
``status`` (``ok`` or ``error``), ``latency`` (seconds of the attempt that answered; None for a failed or
cached item), ``question`` and ``answer``. A failed item has no latency (it is counted, never scored).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from servers.report.model import Found, Run
from servers.report.readers import new_run
from ultra_base.errors import InputError

LATENCY = "latency"  # the column's name: seconds per item
QUANTILES = (50, 95)  # compare's rows: the difference of these percentiles between two runs
RECORD_KEYS = ("id", "status", "latency", "question", "answer")
TARGET_RECORDS = "JSON Lines of target.ask's records: {id, status, latency, question, answer ...} per item"


def is_target_records(document: Any) -> bool:
    """A list of ``target.ask`` records (JSON Lines read as a list)."""
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(r, dict) and all(k in r for k in RECORD_KEYS) for r in document)
    )


def read_target_records(records: list[dict[str, Any]], path: str) -> Found:
    """One run: the ``latency`` of every answered item (lower is better, an ECDF), the questions and answers."""
    ids = [str(record["id"]) for record in records]
    run = new_run(Path(path).stem, "target.ask", path)
    latency = [
        record["latency"] if record["status"] == "ok" and not record.get("cached") else None for record in records
    ]
    if any(value is not None and not isinstance(value, (int, float)) for value in latency):
        raise InputError("a record's latency is not a number of seconds", path=path)
    given = run.add_column(LATENCY, ids, latency, source=f"target.ask: {path}")
    run.lower_is_better.add(given)
    run.kinds[given] = "ecdf"
    run.quantiles[given] = QUANTILES
    for key, record in zip(ids, records, strict=True):
        question, answer = record.get("question"), record.get("answer")
        run.texts.setdefault(key, {"question": str(question or ""), "answer": str(answer or "")})
    failed = sum(record["status"] != "ok" for record in records)
    found = Found("target.ask", [run])
    if failed:
        run.failures["target.ask"] = failed
        found.notes.append(f"target.ask ({Path(path).name}): {failed} of {len(records)} items failed (no latency)")
    return found


def quantile_difference(
    a: np.ndarray, b: np.ndarray, q: float, *, resamples: int, confidence: float, seed: int
) -> tuple[float, float, float, float, float, float]:
    """(q-th percentile of a, of b, b - a, interval low, high, two-sided p) over paired items.

    The interval is the percentile bootstrap of the items (pairs resampled together); the p-value is the paired
    randomisation test (each pair's two values swapped at random) of the percentiles' difference.
    """
    rng = np.random.default_rng(seed)
    n = len(a)
    observed = float(np.percentile(b, q) - np.percentile(a, q))
    picks = rng.integers(0, n, size=(resamples, n))
    boots = np.percentile(b[picks], q, axis=1) - np.percentile(a[picks], q, axis=1)
    tail = (1 - confidence) / 2
    low, high = (float(v) for v in np.quantile(boots, [tail, 1 - tail]))
    swap = rng.random((resamples, n)) < 0.5
    flipped = np.percentile(np.where(swap, a, b), q, axis=1) - np.percentile(np.where(swap, b, a), q, axis=1)
    p_value = float((1 + np.count_nonzero(np.abs(flipped) >= abs(observed) - 1e-12)) / (resamples + 1))
    return float(np.percentile(a, q)), float(np.percentile(b, q)), observed, low, high, p_value


def quantile_rows(runs: Sequence[Run], pairs: Sequence[Any], *, resamples: int, confidence: float, seed: int) -> list:
    """Compare's rows ``latency p50``, ``latency p95`` for every pair and metric with declared quantiles: the
    percentiles' difference B - A over the items both answered, its bootstrap interval, the randomisation
    p-value (Holm over the pair's quantile rows), and the items where B is faster, as fast, slower."""
    from servers.report.compare.pairs import Row
    from ultra_trec.significance import holm

    rows = []
    for pair in pairs:
        first, second = runs[pair.a], runs[pair.b]
        found = []
        for name, quantiles in first.quantiles.items():
            if name not in second.columns or name not in second.quantiles:
                continue
            x = first.columns[name][pair.a_positions]
            y = second.columns[name][pair.b_positions]
            both = np.isfinite(x) & np.isfinite(y)
            if not both.any():
                continue
            x, y = x[both], y[both]
            for q in quantiles:
                figures = quantile_difference(x, y, q, resamples=resamples, confidence=confidence, seed=seed)
                found.append((f"{name} p{q:g}", len(x), figures, (int((y < x).sum()), int((y == x).sum()))))
        adjusted = holm(np.array([figures[5] for _, _, figures, _ in found])) if found else []
        for (metric, n, figures, (wins, ties)), p_holm in zip(found, adjusted, strict=True):
            a_q, b_q, diff, low, high, p_value = figures
            rows.append(
                Row(
                    metric=metric,
                    a=first.label,
                    b=second.label,
                    n=n,
                    a_mean=a_q,
                    b_mean=b_q,
                    diff=diff,
                    ci_low=low,
                    ci_high=high,
                    p_value=p_value,
                    p_holm=float(p_holm),
                    wins=wins,
                    ties=ties,
                    losses=n - wins - ties,
                    significant=bool(p_holm < 1 - confidence),
                    test="percentile bootstrap",
                    higher_is_better=False,
                )
            )
    return rows
