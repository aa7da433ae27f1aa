"""The comparison as people read it: an aligned terminal table, a ranx-style table (each run's mean per metric,
with the letters of the runs it is significantly better than as superscripts), the per-pair rows, and the
scatter of per-item values of the first run against each other run, per metric."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from servers.report.cells import number
from servers.report.compare.pairs import Pair, Row
from servers.report.model import Run
from servers.report.plots import Plot, elide, file_name, letter, render
from ultra_base.errors import require

DISCRETE = 11  # values at most this many distinct values are drawn as counted points, not scattered
COLUMNS = ("metric", "B vs A", "n", "mean A", "mean B", "B - A", "CI of B - A", "p", "p (Holm)", "W/T/L", "")
COLUMNS += ("test", "p (judge exact)")  # which test gave p; the judge-noise-aware test's p with the judge exact
ONLY_IF_EXACT = "significant only if the judge is taken as exact"
LOWER_MARK = "(lower is better)"  # after a metric declared lower-is-better (its tool's registry)


def row_cells(row: Row, *, flag: str = ONLY_IF_EXACT) -> list[str]:
    """One comparison row as the terminal and the page show it (``*``: significant after Holm; ``flag``:
    significant only if the judge is taken as exact)."""
    return [
        row.metric if row.higher_is_better else f"{row.metric} {LOWER_MARK}",
        f"{row.b} vs {row.a}",
        str(row.n),
        number(row.a_mean),
        number(row.b_mean),
        f"{row.diff:+.4f}",
        f"[{row.ci_low:+.4f}, {row.ci_high:+.4f}]",
        number(row.p_value),
        number(row.p_holm),
        f"{row.wins}/{row.ties}/{row.losses}",
        "*" if row.significant else flag if row.only_if_exact else "",
        row.test,
        number(row.p_exact) if row.p_exact == row.p_exact else "",
    ]


def page_table(rows: Sequence[Row]) -> tuple[list[str], list[list[str]]]:
    """The columns and rows of the page's table: significant says yes or no (the terminal's ``*`` or nothing), and
    the test and judge-exact p columns appear only when some row took the judge-noise-aware test."""
    noisy = any(row.test != "randomisation" for row in rows)
    width = len(COLUMNS) if noisy else len(COLUMNS) - 2
    cells = []
    for row in rows:
        line = row_cells(row)
        line[10] = "yes" if row.significant else ONLY_IF_EXACT if row.only_if_exact else "no"
        cells.append(line[:width])
    return [name or "significant" for name in COLUMNS[:width]], cells


def verdict(rows: Sequence[Row], confidence: float) -> str:
    """One line: no significant difference, or per pair (B vs A) the metrics where B is worse, then better."""
    found = [row for row in rows if row.significant and row.diff != 0]
    if not found:
        return f"verdict: no metric differs significantly (at {1 - confidence:.2g}, after Holm)"
    said = []
    for pair in dict.fromkeys((row.b, row.a) for row in found):
        mine = [row for row in found if (row.b, row.a) == pair]
        worse = ", ".join(f"{row.metric} ({row.diff:+.4f})" for row in mine if not row.better)
        better = ", ".join(f"{row.metric} ({row.diff:+.4f})" for row in mine if row.better)
        parts = [f"worse on {worse}" if worse else "", f"better on {better}" if better else ""]
        said.append(f"{pair[0]} vs {pair[1]}: " + "; ".join(part for part in parts if part))
    return "verdict: " + " | ".join(said)


def terminal_table(rows: Sequence[Row], confidence: float, labels: Sequence[str]) -> str:
    """The runs with their letters, the rows as an aligned text table, and a line saying what ``*`` means."""
    noisy = any(row.test != "randomisation" for row in rows)  # else the test and exact-p columns are left out
    width = len(COLUMNS) if noisy else len(COLUMNS) - 2
    letters = {label: letter(i) for i, label in enumerate(labels)}  # the pair by its runs' letters: short rows
    cells = [list(COLUMNS[:width])] + [
        [*cells[:1], f"{letters[row.b]} vs {letters[row.a]}", *cells[2:width]]
        for row in rows
        for cells in [row_cells(row, flag="(*)")]
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(width)]
    numeric = set(range(2, 10)) | ({width - 1} if noisy else set())
    lines = [
        "  ".join(c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
        for line in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    runs = "runs: " + ", ".join(f"{letter(i)} = {label}" for i, label in enumerate(labels))
    notes = [
        f"* = significant at {1 - confidence:.2g} after Holm across the pair's metrics (paired randomisation test"
        + ("; a judge's metric with judge samples: the judge-noise-aware test" if noisy else "")
        + "); W/T/L = items where B is better / equal / worse: higher is better, lower for a metric marked "
        + LOWER_MARK
    ]
    if noisy:
        notes.append(f"(*) = {ONLY_IF_EXACT}; p (judge exact) = the same bootstrap without the judge's noise")
    lines = [*_wrapped(verdict(rows, confidence)), *_wrapped(runs), *lines, *(w for n in notes for w in _wrapped(n))]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _wrapped(text: str) -> list[str]:
    """A note wrapped at 100 columns, later lines indented (a path longer than that stays whole)."""
    import textwrap

    return textwrap.wrap(text, 100, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False) or [text]


def ranx_table(runs: Sequence[Run], rows: Sequence[Row]) -> dict[str, Any]:
    """Rows = runs, columns = metrics of two or more runs: the run's mean with the letters of the runs it is
    significantly better than on the items both have (higher, or lower for a lower-is-better metric)."""
    labels = [run.label for run in runs]
    metrics = list(dict.fromkeys(row.metric for row in rows))
    better: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        if row.significant and row.diff != 0:
            winner, loser = (row.b, row.a) if row.better else (row.a, row.b)
            better.setdefault((winner, row.metric), []).append(letter(labels.index(loser)))
    table = []
    for index, run in enumerate(runs):
        cells = []
        for name in metrics:
            column = run.columns.get(name)
            values = column[np.isfinite(column)] if column is not None else np.empty(0)
            mean = number(float(values.mean())) if len(values) else ""
            cells.append({"mean": mean, "better": "".join(sorted(better.get((run.label, name), [])))})
        table.append({"letter": letter(index), "label": run.label, "cells": cells})
    return {"metrics": metrics, "rows": table}


def _counts(axes, x: np.ndarray, y: np.ndarray, marker: str, *, offset: float) -> None:
    """Discrete values (binary, graded): one marker per (x, y) pair sized by its count, the count written."""
    pairs, counts = np.unique(np.column_stack([x, y]), axis=0, return_counts=True)
    axes.scatter(pairs[:, 0] + offset, pairs[:, 1], s=20 + 400 * counts / counts.max(), marker=marker,
                 facecolors="none", edgecolors="black", linewidths=0.7)  # fmt: skip
    for (a, b), count in zip(pairs, counts, strict=True):
        axes.annotate(str(count), (a + offset, b), textcoords="offset points", xytext=(6, 6), fontsize=9)


def scatters(runs: Sequence[Run], pairs: Sequence[Pair], *, limit: int, seed: int) -> tuple[list[Plot], str]:
    """Per metric, the first run's value of each item (x) against each other run's (y); beyond ``limit`` items per
    run a seeded sample is drawn, and the returned note says so."""
    require("matplotlib", extra="report")
    from matplotlib.figure import Figure

    from servers.report.charts import MARKERS
    from servers.report.compare.pairs import shared_metrics

    firsts = [pair for pair in pairs if pair.a == 0]
    metrics = list(dict.fromkeys(name for pair in firsts for name in shared_metrics(runs, pair)))
    plots, sampled = [], 0
    rng = np.random.default_rng(seed)
    for name in metrics:
        figure = Figure(figsize=(3.8, 3.2))
        figure.subplots_adjust(left=0.17, right=0.97, top=0.88, bottom=0.15)
        axes = figure.add_subplot()
        low, high = np.inf, -np.inf
        for number_, pair in enumerate(p for p in firsts if name in runs[p.b].columns):
            x = runs[0].columns[name][pair.a_positions]
            y = runs[pair.b].columns[name][pair.b_positions]
            keep = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
            if len(keep) > limit:
                keep = np.sort(rng.choice(keep, limit, replace=False))
                sampled = max(sampled, limit)
            if not len(keep):
                continue
            low, high = min(low, x[keep].min(), y[keep].min()), max(high, x[keep].max(), y[keep].max())
            marker, label = MARKERS[number_ % len(MARKERS)], f"{letter(pair.b)}: {elide(runs[pair.b].label, 20)}"
            discrete = len(np.unique(np.concatenate([x[keep], y[keep]]))) <= DISCRETE
            if discrete:
                _counts(axes, x[keep], y[keep], marker, offset=0.03 * number_)
            axes.plot(x[keep][:0] if discrete else x[keep], y[keep][:0] if discrete else y[keep], linestyle="none",
                      marker=marker, markersize=2.5, markerfacecolor="none", markeredgecolor="black",
                      markeredgewidth=0.4, label=label)  # fmt: skip
        if np.isfinite(low):
            axes.plot([low, high], [low, high], color="grey", linestyle="--", linewidth=0.8, label="y = x")
        axes.set_title(f"{name}: per item, each run against a", fontsize=9)
        axes.set_xlabel(f"{name} of a: {elide(runs[0].label, 24)}")
        axes.set_ylabel(f"{name} of the other run")
        axes.legend(fontsize=7.5, loc="best", markerscale=2)  # readable at the page's ~0.8 scale
        plots.append(Plot(f"scatter_{file_name(name)}.png", name, render(figure), "scatter"))
    note = (
        f"The scatters show a seeded random sample of {sampled} items per run (seed {seed}); the tables use every item."
        if sampled
        else ""
    )
    return plots, note
