"""The report's contents as text: report.html (jinja2, autoescaped, self-contained), summary.csv, per_query.csv."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from servers.report.cells import number
from servers.report.charts import Charts
from servers.report.model import counts_of
from servers.report.plots import Plot, chart_labels, column_names
from servers.report.sources import Collected
from servers.report.stats import Summary
from ultra_kit.factory import __version__
from ultra_kit.files import csv_text
from ultra_kit.labels.page import section

TEMPLATES = Path(__file__).parent / "templates"  # report.html, compare.html, comparison.html and their partials
TEXT_CHARS = 240  # question and answer cells are cut here (the result files hold the whole text)
SUMMARY_COLUMNS = ("run", "metric", "mean", "median", "ci_low", "ci_high", "n", "missing")


def summary_csv(rows: Sequence[Summary], *, confidence: float, resamples: int, seed: int) -> str:
    """summary.csv: a row per (run, metric), full precision, with the bootstrap's settings."""
    lines = []
    for row in rows:
        values = [getattr(row, c) for c in SUMMARY_COLUMNS]
        cells = ["" if isinstance(v, float) and math.isnan(v) else v for v in values]
        lines.append([*cells, confidence, resamples, seed])
    return csv_text([*SUMMARY_COLUMNS, "confidence", "resamples", "seed"], lines)


def per_query_csv(collected: Collected) -> str:
    """per_query.csv: every (run, query) row with its question, answer and every metric (long format)."""
    names = column_names(collected.runs)  # the counts too: num_ret per query
    lines = []
    for run in collected.runs:
        matrix = np.column_stack([run.columns.get(n, np.full(len(run.ids), np.nan)) for n in names]).astype(object)
        matrix[np.isnan(matrix.astype(np.float64))] = None  # an empty cell; floats are written with repr
        for key, cells in zip(run.ids, matrix.tolist(), strict=True):
            text = run.texts.get(key, {})
            lines.append([run.label, key, text.get("question", ""), text.get("answer", ""), *cells])
    return csv_text(["run", "id", "question", "answer", *names], lines)  # a cell starting = + - @ is neutralised


def query_table(collected: Collected, *, limit: int, seed: int) -> dict[str, Any]:
    """The per-query table on the page: every row up to ``limit``, beyond that a seeded sample, said so."""
    names = column_names(collected.runs)  # the counts too: num_ret per query
    sizes = [len(run.ids) for run in collected.runs]
    total = sum(sizes)
    chosen = np.arange(total) if total <= limit else np.sort(np.random.default_rng(seed).choice(total, limit, False))
    starts = np.cumsum([0, *sizes])
    rows = []
    has_text = any(run.texts for run in collected.runs)
    for run_index, run in enumerate(collected.runs):
        lo, hi = starts[run_index], starts[run_index + 1]
        positions = chosen[(chosen >= lo) & (chosen < hi)] - lo
        columns = [run.columns.get(n) for n in names]
        for position in positions:
            key = run.ids[position]
            text = run.texts.get(key, {})
            cells = [number(float(c[position])) if c is not None else "" for c in columns]
            row = [run.label] if len(collected.runs) > 1 else []
            row.append(key)
            if has_text:
                row += [_cut(text.get("question", "")), _cut(text.get("answer", ""))]
            said = [(judge, verdict, _cut(why)) for judge, verdict, why in run.rationales.get(key, [])]
            rows.append({"cells": row + cells, "rationales": said})
    header = (["run"] if len(collected.runs) > 1 else []) + ["query id"]
    header += ["question", "answer"] if has_text else []
    header += ["judges' verdicts"] if any(run.rationales for run in collected.runs) else []
    return {
        "header": header + names,
        "rows": rows,
        "shown": len(rows),
        "total": total,
        "sampled": total > limit,
        "rationales": any(run.rationales for run in collected.runs),
        "text_columns": len(header) - (1 if any(run.rationales for run in collected.runs) else 0),
    }


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"


def templates(*, keep_trailing_newline: bool) -> Any:
    """The report's jinja2 templates (``templates/``: autoescaped, strict), where ``{% include %}`` finds the
    partials the pages share (``_style.html``, ``_sortable.html``)."""
    import jinja2

    loader = jinja2.FileSystemLoader(TEMPLATES, encoding="utf-8")
    return jinja2.Environment(
        loader=loader, autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=keep_trailing_newline
    )


def render_html(
    collected: Collected,
    summary: Sequence[Summary],
    drawn: Charts,
    risk_plots: Sequence[Plot],
    judged_plots: Sequence[Plot],
    *,
    confidence: float,
    resamples: int,
    seed: int,
    max_table_rows: int,
    headline_metrics: Sequence[str],
    examples: int,
    comparison: dict[str, Any] | None = None,
    slices: Sequence[dict[str, Any]] = (),
) -> str:
    """The whole report page; ``examples``: the largest disagreements listed per label store; ``slices``: the
    per-group views (``groups.slice_views``)."""
    from servers.report.headline import headline
    from servers.report.judged.tables import view as judged_view
    from servers.report.risk import view

    template = templates(keep_trailing_newline=True).get_template("report.html")
    risks = [
        view(risk, risk["label"], base64.b64encode(plot.png).decode("ascii"))
        for risk, plot in zip(collected.risks, risk_plots, strict=True)
    ]
    judged = [
        judged_view(item, item["label"], base64.b64encode(plot.png).decode("ascii"))
        for item, plot in zip(collected.judged, judged_plots, strict=True)
    ]
    plots = drawn.plots
    return template.render(
        headline=headline(collected.runs, summary, collected.risks, headline_metrics),
        risks=risks,
        ppis=[item for item in judged if item["tool"] == "ppi"],
        judged_tests=[item for item in judged if item["tool"] == "compare_judged"],
        fills=[item for item in judged if item["tool"] == "fill_qrels"],
        constants=drawn.constants,
        comparison=comparison,
        labels=[{**item, "html": section(item["report"], None, top=examples, level=4)} for item in collected.labels],
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
        runs=[
            {**_run_view(run), "chart": chart}
            for run, chart in zip(collected.runs, chart_labels([run.label for run in collected.runs]), strict=True)
        ],
        notes=collected.notes,
        summary=[{c: number(getattr(row, c)) for c in SUMMARY_COLUMNS} for row in summary],
        side_by_side=side_by_side(summary, [run.label for run in collected.runs]),
        confidence=f"{confidence:.0%}",
        resamples=resamples,
        seed=seed,
        answered=_answered(collected),
        significance=[_significance_row(row) for row in collected.significance],
        scalars={label: {k: number(v) for k, v in values.items()} for label, values in collected.scalars.items()},
        sweeps=[_sweep_view(sweep) for sweep in collected.sweeps],
        plots=[
            {"title": p.title, "name": p.name, "kind": p.kind, "data": base64.b64encode(p.png).decode("ascii")}
            for p in plots
        ],
        table=query_table(collected, limit=max_table_rows, seed=seed),
        counts=count_table(collected.runs),
        slices=[
            {**view, "data": base64.b64encode(view["plot"].png).decode("ascii") if view["plot"] else ""}
            for view in slices
        ],
    )


def count_table(runs: Sequence[Any]) -> dict[str, Any] | None:
    """The counts (``num_ret``, ``num_rel`` ...): per run, the sum over its queries; None when there are none."""
    counts = counts_of(runs)
    names = [name for name in column_names(runs) if name in counts]
    if not names:
        return None
    rows = []
    for run in runs:
        sums = [run.columns[n][np.isfinite(run.columns[n])].sum() if n in run.columns else None for n in names]
        rows.append([run.label, str(len(run.ids)), *("" if s is None else number(int(s)) for s in sums)])
    return {"names": names, "rows": rows}


def side_by_side(summary: Sequence[Summary], runs: Sequence[str]) -> dict[str, Any] | None:
    """With several runs: a row per metric, a cell per run holding "mean [CI low, CI high]"."""
    if len(runs) < 2:
        return None
    cells: dict[str, dict[str, str]] = {}
    for row in summary:
        cells.setdefault(row.metric, {})[row.run] = (
            f"{number(row.mean)} [{number(row.ci_low)}, {number(row.ci_high)}]" if row.n else ""
        )
    return {
        "runs": list(runs),
        "rows": [[metric, *(by_run.get(r, "") for r in runs)] for metric, by_run in cells.items()],
    }


def _run_view(run: Any) -> dict[str, Any]:
    parameters = {
        name: value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
        for name, value in run.parameters.items()
    }
    timings = run.timings if isinstance(run.timings, dict) else {}
    steps = [(str(s[0]), number(float(s[1]), 3)) for s in timings.get("steps", []) if isinstance(s, list | tuple)]
    total = timings.get("total_seconds")
    return {
        "label": run.label,
        "sources": run.sources,
        "queries": len(run.ids),
        "metrics": len(run.columns),
        "parameters": parameters,
        "steps": steps,
        "total_seconds": number(float(total), 3) if isinstance(total, int | float) else "",
    }


def _answered(collected: Collected) -> list[dict[str, str]]:
    rows = []
    for run in collected.runs:
        if run.answered and run.answered["judged"]:
            share = run.answered["answered"] / run.answered["judged"]
            rows.append(
                {
                    "run": run.label,
                    "share": f"{share:.1%}",
                    "answered": number(run.answered["answered"], 1),
                    "judged": str(run.answered["judged"]),
                    "total": str(run.answered["items"]),
                }
            )
    return rows


def _significance_row(row: dict[str, Any]) -> dict[str, str]:
    keys = ("run", "metric", "A_mean", "B_mean", "diff", "p_value", "p_value_adjusted", "t_test_p_value")
    view = {key: number(row.get(key)) for key in keys}
    view["ci"] = f"[{number(row.get('ci_low'))}, {number(row.get('ci_high'))}]"
    view["significant"] = "yes" if row.get("significant") else "no"
    return view


def _sweep_view(sweep: dict[str, Any]) -> dict[str, Any]:
    columns = [c for c in sweep["columns"] if c]
    rows = [
        [number(row.get(c)) if not isinstance(row.get(c), str) else row[c] for c in columns] for row in sweep["rows"]
    ]
    return {"path": sweep["path"], "metric": sweep.get("metric"), "columns": columns, "rows": rows}
