"""The report's section per group (``benchmark.group_by``): for each run whose items carry groups, a row per
group (its items, and every metric's mean with its bootstrap interval, from the summary's group rows) and a
small chart of the same means and intervals, a panel per metric, a line per group."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from servers.report.cells import number
from servers.report.groups import group_values, label_of
from servers.report.model import Run
from servers.report.plots import Plot, file_name, metric_names, render
from servers.report.stats import Summary

PANELS_PER_ROW = 4
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C")


def slice_views(runs: Sequence[Run], summary: Sequence[Summary], *, confidence: float) -> list[dict[str, Any]]:
    """Per run with groups: its ``group_by``, the metrics, a row per group [group, items, "mean [low, high]" per
    metric] and the chart (a ``Plot``). ``summary`` holds the group rows (``groups.group_summaries``)."""
    rows_by = {(row.run, row.metric): row for row in summary}
    views = []
    for run in runs:
        if not run.groups:
            continue
        values, metrics = group_values(run), metric_names([run])
        sizes = {value: 0 for value in values}
        for key in run.ids:
            sizes[run.groups.get(key, "")] += 1
        rows = []
        for value in values:
            cells = []
            for metric in metrics:
                row = rows_by.get((label_of(run, value), metric))
                cells.append(f"{number(row.mean)} [{number(row.ci_low)}, {number(row.ci_high)}]" if row and row.n else "")
            rows.append([value or "(none)", str(sizes[value]), *cells])
        title = f"{run.label}: each metric per {run.group_by or 'group'}"
        png = render(_chart(run, values, metrics, rows_by, confidence)) if metrics else b""
        views.append(
            {
                "run": run.label,
                "group_by": run.group_by or "group",
                "metrics": metrics,
                "rows": rows,
                "plot": Plot(f"groups_{file_name(run.label)}.png", title, png, "groups") if png else None,
            }
        )
    return views


def _chart(run: Run, values: list[str], metrics: list[str], rows_by: dict[tuple[str, str], Summary], confidence: float):
    """A panel per metric: each group's mean (a marker) and its interval (a line), the groups on the y axis."""
    from matplotlib.figure import Figure

    columns = min(PANELS_PER_ROW, len(metrics))
    lines = math.ceil(len(metrics) / columns)
    height = 0.6 + 0.28 * len(values)
    figure = Figure(figsize=(0.9 + 2.0 * columns, 0.5 + (height + 0.55) * lines))
    figure.subplots_adjust(left=0.9 / (0.9 + 2.0 * columns), right=0.97, wspace=0.35, hspace=0.75)
    for index, metric in enumerate(metrics):
        axes = figure.add_subplot(lines, columns, index + 1)
        for position, value in enumerate(values):
            row = rows_by.get((label_of(run, value), metric))
            if row is None or not row.n:
                continue
            colour, marker = COLOURS[position % len(COLOURS)], MARKERS[position % len(MARKERS)]
            axes.plot([row.ci_low, row.ci_high], [position, position], color=colour, linewidth=2)
            axes.plot([row.mean], [position], marker=marker, color="black", markerfacecolor=colour, markersize=6)
        axes.set_yticks(range(len(values)), [v or "(none)" for v in values] if index % columns == 0 else [])
        axes.set_ylim(len(values) - 0.5, -0.5)
        axes.set_title(metric, fontsize=9)
        axes.tick_params(labelsize=7)
        axes.locator_params(axis="x", nbins=3)
        axes.grid(axis="x", alpha=0.3)
    figure.suptitle(f"mean and {confidence:.0%} interval per {run.group_by or 'group'}", fontsize=9)
    return figure
