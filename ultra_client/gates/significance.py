"""``no_significant_drop: true``: the run against its baseline item by item, with the report server's ``compare``
tool (called in this process through its ``SPEC``, as ``ultra compare`` does).

``compare`` matches the two runs' items on their ids, and for every metric they share gives the paired
difference (this run minus the baseline), the paired randomisation test's p-value and its Holm correction
across the metrics (its settings: ``servers/report/parameter.yaml``). A condition fails when its metric's
difference is significant after Holm and for the worse: negative, or positive for a lower-is-better metric.
The comparison (compare.html, comparison.json) is kept in the run folder, under ``gate_compare/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultra_client.errors import did_you_mean

OUT_FOLDER = "gate_compare"


def compare_rows(run: Path, baseline: Path) -> dict[str, Any] | str:
    """``compare``'s result (baseline = A, run = B: its ``rows`` and ``counts``), or why there is none (a message)."""
    from ultra_client.errors import UltraError
    from ultra_client.report_cli import call_tool

    out = run / OUT_FOLDER / baseline.name
    try:
        result = call_tool("compare", {"run_paths": [str(baseline), str(run)], "labels": {}}, [str(baseline)], str(out))
    except UltraError as exc:
        return f"the compare tool could not pair this run with baseline {baseline}: {exc}"
    return result


def find_row(compared: dict[str, Any], metric: str) -> dict[str, Any] | str:
    """The row of ``metric`` (a gate's ``variable.key``: compare names per-item metrics by key), or a message."""
    rows, counts = compared["rows"], compared.get("counts", [])
    _, _, key = metric.partition(".")
    quantile = metric.replace(".", " ", 1)  # compare's latency rows: latency.p95 -> "latency p95"
    candidates = [metric, quantile, key, key.removeprefix("avg_")] if key else [metric]
    if any(name in counts for name in candidates):
        return f"{metric} is a count (kind count in its registry), not a metric: no paired test; gate it with min/max"
    for name in candidates:
        for row in rows:
            if row.get("metric") == name:
                return row
    names = sorted({str(row.get("metric")) for row in rows})
    return f"no per-item values of {metric} in both runs for a paired test" + did_you_mean(key or metric, names)


def dropped(row: dict[str, Any], higher_is_better: bool = True) -> str | None:
    """Why the row is a significant change for the worse (a drop; a rise for a lower-is-better metric), or None."""
    diff = row.get("diff", 0)
    if row.get("significant") and (diff < 0 if higher_is_better else diff > 0):
        return (
            f"significant {'drop' if higher_is_better else 'rise'}: this run - baseline = {diff:+.4f} over "
            f"{row['n']} paired items, p (Holm) {row['p_holm']:.4g}"
        )
    return None


def note(row: dict[str, Any]) -> str:
    """The paired test's numbers, for a condition that passed."""
    return f"this run - baseline = {row['diff']:+.4f} over {row['n']} items, p (Holm) {row['p_holm']:.4g}"
