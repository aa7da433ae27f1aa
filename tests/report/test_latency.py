"""Latency in the report and in compare: target.ask's records (JSON Lines) give a per-item ``latency`` column,
drawn as an ECDF, lower-is-better, and compare adds the p50 and p95 differences with a bootstrap interval.
Expected figures are computed here with numpy from the records' own values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from servers.report.compare.latency import quantile_difference
from tests.report.helpers import build, summary_rows
from tests.report.test_compare import call_compare

N = 40


def records_file(folder: Path, latencies: list[float | None]) -> Path:
    """target.ask's records (the fields its results module writes), one item failed where latency is None."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, seconds in enumerate(latencies):
        ok = seconds is not None
        lines.append({
            "index": i, "id": f"q{i}", "conversation": None, "turn": 0, "question": f"question {i}", "history_turns": 0,
            "attempts": 1, "cached": False, "status": "ok" if ok else "error", "reason": None if ok else "timeout",
            "detail": None if ok else "no complete reply within 5 s", "answer": f"answer {i}" if ok else None,
            "contexts": [], "citations": [], "usage": None, "latency": seconds, "flags": [],
        })  # fmt: skip
    path = folder / "ask_20260101_120000.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _latencies(seed: int, shift: float) -> list[float]:
    rng = np.random.default_rng(seed)
    return [round(float(v), 6) for v in rng.lognormal(-2.5, 0.6, N) + shift]


def test_the_report_draws_latency_as_an_ecdf_and_counts_failed_items(tmp_path: Path) -> None:
    latencies: list[float | None] = _latencies(1, 0.0)
    latencies[3] = None
    files = build([records_file(tmp_path / "run", latencies)], tmp_path / "out")
    assert any(path.name == "ecdf_latency.png" for path in files.plot_paths)
    row = next(row for (run, metric), row in summary_rows(files).items() if metric == "latency")
    values = np.array([v for v in latencies if v is not None])
    assert int(row["n"]) == N - 1 and float(row["mean"]) == pytest.approx(values.mean(), abs=1e-4)
    html = files.report_path.read_text(encoding="utf-8")
    assert "1 of 40 items failed (no latency)" in html and "question 5" in html


def test_compare_gives_the_p50_and_p95_differences_with_their_interval(tmp_path: Path) -> None:
    slow = _latencies(2, 0.0)
    fast = [round(v * 0.5, 6) for v in slow]  # every item twice as fast
    a, b = records_file(tmp_path / "a", slow), records_file(tmp_path / "b", fast)
    result = call_compare([a, b], tmp_path / "cmp")
    rows = {row["metric"]: row for row in result["rows"]}
    x, y = np.array(slow), np.array(fast)
    for q in (50, 95):
        row = rows[f"latency p{q}"]
        assert row["a_mean"] == pytest.approx(np.percentile(x, q)) and row["b_mean"] == pytest.approx(
            np.percentile(y, q)
        )
        assert row["diff"] == pytest.approx(np.percentile(y, q) - np.percentile(x, q))
        assert row["ci_low"] <= row["diff"] <= row["ci_high"] < 0
        assert (row["wins"], row["ties"], row["losses"]) == (N, 0, 0) and row["higher_is_better"] is False
        assert row["test"] == "percentile bootstrap" and row["significant"]
    assert rows["latency"]["higher_is_better"] is False and rows["latency"]["wins"] == N  # the mean, as for any metric
    assert "latency p95" in result["text"]


def test_the_quantile_interval_is_the_percentile_bootstrap_of_paired_items() -> None:
    rng = np.random.default_rng(7)
    a = rng.exponential(0.1, 200)
    b = a + 0.02  # a constant shift: every resample's difference is the shift
    a_q, b_q, diff, low, high, p = quantile_difference(a, b, 95, resamples=500, confidence=0.95, seed=3)
    assert diff == pytest.approx(0.02) and low == pytest.approx(0.02) and high == pytest.approx(0.02)
    same = quantile_difference(a, a.copy(), 50, resamples=500, confidence=0.95, seed=3)
    assert same[2] == 0.0 and same[5] == 1.0
