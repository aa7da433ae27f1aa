"""A sweep's table: one row per trial, ranked by the metric, tested against the best; sweep.csv and sweep.json.

The paired tests are those of ``evaluate_trec_pvalue`` (``ultra_trec/significance.py``):
the sign-flip randomisation test of each trial's per-query scores against the best trial's, with
Holm's correction over the trials. ``n_resamples``, ``seed`` and ``alpha`` are the evaluation
server's defaults (``servers/evaluation/parameter.yaml``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ultra_client.errors import write_output
from ultra_kit.files import atomic_write_json, atomic_write_text, csv_text

FIXED_COLUMNS = ("trial", "rank", "best", "status")
TEST_COLUMNS = ("p_value", "p_value_holm", "significant")
TAIL_COLUMNS = ("wall_seconds", "tool_seconds", "error", "folder", "fingerprint")


def rank(rows: list[dict[str, Any]], metric: str | None, minimize: bool) -> None:
    """Set ``rank`` (1 = best; ties keep trial order) and ``best`` on rows whose metric is a finite number."""
    for row in rows:
        row["rank"], row["best"] = None, False
    if metric is None:
        return
    scored = [r for r in rows if r["status"] == "ok" and _finite(r["results"].get(metric))]
    scored.sort(key=lambda r: (r["results"][metric] if minimize else -r["results"][metric], r["trial"]))
    for position, row in enumerate(scored, start=1):
        row["rank"] = position
    if scored:
        scored[0]["best"] = True


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def significance(rows: list[dict[str, Any]], metric: str | None) -> str | None:
    """p-values of every ranked trial against the best, Holm-adjusted over the trials; a note if none.

    Only trials whose per-query scores cover the same queries as the best's are tested.
    """
    for row in rows:
        row.update(p_value=None, p_value_holm=None, significant=None)
    best = next((r for r in rows if r["best"]), None)
    if metric is None or best is None:
        return None
    reference = best.get("per_query", {}).get(metric)
    if not reference:
        return f"no per-query scores behind {metric}: no significance tests"
    queries = sorted(reference)
    others = [
        r for r in rows if r["rank"] and not r["best"] and set(r.get("per_query", {}).get(metric, {})) == set(queries)
    ]
    if not others:
        return None
    import numpy as np

    from ultra_kit.settings import defaults
    from ultra_trec.significance import holm, randomisation_p_values

    settings = defaults("evaluation")
    a = np.array([[r["per_query"][metric][q] for q in queries] for r in others])
    b = np.tile(np.array([reference[q] for q in queries]), (len(others), 1))
    # the p-values paired_tests gives (the same draws: they come first from the seeded generator), without the
    # bootstrap intervals and t-tests the table does not show
    p_values, _ = randomisation_p_values(a - b, settings["n_resamples"], np.random.default_rng(settings["seed"]))
    adjusted = holm(p_values)
    for row, p, q in zip(others, p_values, adjusted, strict=True):
        row.update(p_value=float(p), p_value_holm=float(q), significant=bool(q < settings["alpha"]))
    left = sum(1 for r in rows if r["rank"] and not r["best"]) - len(others)
    if left:
        return f"{left} trial(s) scored other queries than the best one: not tested"
    return None


def result_columns(rows: list[dict[str, Any]], metric: str | None) -> list[str]:
    """Every scalar result name of any trial, the metric first, then in first-seen order."""
    names: dict[str, None] = {}
    if metric:
        names[metric] = None
    for row in rows:
        names.update(dict.fromkeys(row.get("results", {})))
    return list(names)


def table(rows: list[dict[str, Any]], keys: list[str], metric: str | None) -> tuple[list[str], list[dict[str, Any]]]:
    """The columns and flat rows of sweep.csv: ranked trials first, then the unranked, in trial order."""
    results = result_columns(rows, metric)
    columns = [*FIXED_COLUMNS, *keys, *results, *TEST_COLUMNS, *TAIL_COLUMNS]
    ordered = sorted(rows, key=lambda r: (r["rank"] is None, r["rank"] or 0, r["trial"]))
    flat = []
    for row in ordered:
        line = {name: row.get(name) for name in (*FIXED_COLUMNS, *TEST_COLUMNS, *TAIL_COLUMNS)}
        line.update({key: row["values"].get(key) for key in keys})
        line.update({name: row.get("results", {}).get(name) for name in results})
        flat.append(line)
    return columns, flat


def sweep_csv(columns: list[str], flat: list[dict[str, Any]]) -> str:
    """sweep.csv: a row per trial (``ultra_kit.files.csv_text``: no cell a spreadsheet would evaluate)."""
    return csv_text(columns, [[_cell(line.get(name)) for name in columns] for line in flat])


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return value


def write_tables(folder: Path, spec: Any, rows: list[dict[str, Any]], notes: list[str]) -> list[dict[str, Any]]:
    """Write ``sweep.csv`` and ``sweep.json`` (atomically); return the flat rows in table order."""
    columns, flat = table(rows, spec.keys, spec.metric)
    write_output(folder / "sweep.csv", lambda p: atomic_write_text(p, sweep_csv(columns, flat)))
    payload = {
        "pipeline": str(spec.pipeline),
        "method": spec.method,
        "seed": spec.seed if spec.method != "grid" else None,
        "metric": spec.metric,
        "minimize": spec.minimize,
        "keys": spec.keys,
        "notes": notes,
        "columns": columns,
        "rows": flat,
    }
    write_output(folder / "sweep.json", lambda p: atomic_write_json(p, payload))
    return flat
