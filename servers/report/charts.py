"""One chart per metric, chosen by the metric's kind (declared in its registry and recorded in the result
file; undeclared metrics are continuous):

* binary: the rate of 1s per run with its 95% Wilson interval (a bar per run);
* graded: the share of items at each grade, stacked (a bar per run);
* continuous: box plots (an ECDF when a run has fewer than ``ECDF_BELOW`` values);
* ecdf: an ECDF whatever the count (``target.ask``'s latency: the tail is what matters);
* a metric constant over every item of every run: one line of text, no chart.

Every chart has a title, axis labels with units, and reads in greyscale (hatches and markers, not colour
alone). matplotlib (Agg, no pyplot state) is imported here only (extra ``report``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from servers.report.model import Run
from servers.report.plots import (
    Plot,
    chart_labels,
    file_name,
    grouped_boxplot,
    metric_names,
    render,
    single_boxplot,
    unique_names,
    values_of,
)
from ultra_base.errors import require

CHART_KINDS = ("binary", "graded", "continuous", "ecdf")
ECDF_BELOW = 10  # values per run under which a continuous metric is drawn as an ECDF
MAX_GRADES = 11  # a "graded" metric with more distinct values is drawn as continuous
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--", "**", "||", "OO")
GREYS = ("#f2f2f2", "#bdbdbd", "#8c8c8c", "#5e5e5e", "#d9d9d9", "#a6a6a6", "#737373", "#404040")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINES = ("-", "--", ":", "-.")


@dataclass(frozen=True)
class Charts:
    """The charts, and the metrics that got a line of text instead (constant everywhere)."""

    plots: list[Plot]
    constants: list[str]
    kinds: dict[str, str]  # metric -> the kind it was drawn as


def kind_of(runs: Sequence[Run], name: str) -> str:
    """The metric's declared kind (the first run that declares it), else continuous."""
    declared = next((run.kinds[name] for run in runs if name in run.kinds), "continuous")
    return declared if declared in CHART_KINDS else "continuous"


def wilson(successes: int, total: int) -> tuple[float, float]:
    """The 95% Wilson score interval of successes / total (scipy's binomtest)."""
    from scipy.stats import binomtest

    interval = binomtest(successes, total).proportion_ci(confidence_level=0.95, method="wilson")
    return float(interval.low), float(interval.high)


def charts(runs: Sequence[Run]) -> Charts:
    """Every metric's chart, by kind; the overview of the continuous 0-1 metrics when there are two or more."""
    require("matplotlib", extra="report")
    from matplotlib.figure import Figure

    plots, constants, kinds = [], [], {}
    unit = []
    for name in metric_names(runs):
        values = [values_of(run, name) for run in runs]
        present = np.concatenate(values) if values else np.empty(0)
        if present.size and np.all(present == present[0]):
            total = sum(len(v) for v in values)
            constants.append(f"{name}: {present[0]:.4g} for every one of the {total} values of every run")
            continue
        kind = kind_of(runs, name)
        if kind == "graded" and len(np.unique(present)) > MAX_GRADES:
            kind = "continuous"
        kinds[name] = kind
        if kind == "binary":
            plots.append(Plot(f"rate_{file_name(name)}.png", name, render(_rates(Figure, runs, name, values)), kind))
        elif kind == "graded":
            plots.append(Plot(f"grades_{file_name(name)}.png", name, render(_grades(Figure, runs, name, values)), kind))
        elif kind == "ecdf" or max(len(v) for v in values) < ECDF_BELOW:
            plots.append(Plot(f"ecdf_{file_name(name)}.png", name, render(_ecdf(Figure, runs, name, values)), kind))
        else:
            plots.append(Plot(f"boxplot_{file_name(name)}.png", name, render(single_boxplot(Figure, runs, name)), kind))
            if all(len(v) == 0 or (v.min() >= 0 and v.max() <= 1) for v in values):
                unit.append(name)
    if len(unit) >= 2:
        overview = render(grouped_boxplot(Figure, runs, unit))
        plots.insert(0, Plot("boxplot_overview.png", "Every continuous 0-1 metric, by run", overview, "continuous"))
    return Charts(unique_names(plots), constants, kinds)


def _frame(figure_class, runs: Sequence[Run], extra: float = 0.0):
    inches = max(3.4, 0.9 * len(runs) + 1.8 + extra)
    figure = figure_class(figsize=(inches, 3.0))
    figure.subplots_adjust(left=0.95 / inches, right=1 - (0.1 + extra) / inches, top=0.88, bottom=0.25)
    return figure, figure.add_subplot()


def _run_ticks(axes, runs: Sequence[Run]) -> None:
    tilt = {"rotation": 15, "ha": "right"} if len(runs) > 2 else {"fontsize": 8}
    axes.set_xticks(range(len(runs)), chart_labels([run.label for run in runs]), **tilt)


def _rates(figure_class, runs: Sequence[Run], name: str, values: list[np.ndarray]):
    figure, axes = _frame(figure_class, runs)
    for index, column in enumerate(values):
        if not len(column):
            continue
        hits = int(np.count_nonzero(column >= 0.5))
        low, high = wilson(hits, len(column))
        rate = hits / len(column)
        axes.bar(index, rate, width=0.6, color=GREYS[index % len(GREYS)], edgecolor="black",
                 hatch=HATCHES[index % len(HATCHES)])  # fmt: skip
        axes.errorbar(index, rate, yerr=[[rate - low], [high - rate]], color="black", capsize=5, linewidth=1.2)
        axes.annotate(f"{rate:.0%}\nn={len(column)}", (index, high), textcoords="offset points", xytext=(0, 3),
                      ha="center", fontsize=7)  # fmt: skip
    _run_ticks(axes, runs)
    axes.set_ylim(0, 1.18)
    axes.set_title(f"{name}: rate with 95% Wilson interval", fontsize=10)
    axes.set_ylabel("rate (share of items = 1)")
    axes.set_xlabel("run")
    axes.grid(axis="y", alpha=0.3)
    return figure


def _grades(figure_class, runs: Sequence[Run], name: str, values: list[np.ndarray]):
    grades = np.unique(np.concatenate(values))
    figure, axes = _frame(figure_class, runs, extra=1.0)
    for index, column in enumerate(values):
        bottom = 0.0
        for position, grade in enumerate(grades):
            share = float(np.mean(column == grade)) if len(column) else 0.0
            axes.bar(index, share * 100, bottom=bottom, width=0.6, color=GREYS[position % len(GREYS)],
                     edgecolor="black", hatch=HATCHES[position % len(HATCHES)],
                     label=f"{grade:g}" if index == 0 else None)  # fmt: skip
            bottom += share * 100
    _run_ticks(axes, runs)
    axes.set_ylim(0, 100)
    axes.set_title(f"{name}: share of items at each grade", fontsize=10)
    axes.set_ylabel("share of items (%)")
    axes.set_xlabel("run")
    axes.legend(title="grade", fontsize=7, title_fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def _ecdf(figure_class, runs: Sequence[Run], name: str, values: list[np.ndarray]):
    figure, axes = _frame(figure_class, runs, extra=1.4)
    labels = chart_labels([run.label for run in runs])
    for index, column in enumerate(values):
        if not len(column):
            continue
        ordered = np.sort(column)
        share = np.arange(1, len(ordered) + 1) / len(ordered)
        every = max(1, len(ordered) // 10)  # a marker per tenth: runs apart in greyscale, thousands of points light
        axes.step(ordered, share, where="post", color="black", linestyle=LINES[index % len(LINES)],
                  marker=MARKERS[index % len(MARKERS)], markevery=every, markersize=4,
                  label=labels[index])  # fmt: skip
    axes.set_ylim(0, 1.05)
    few = max(len(v) for v in values) < ECDF_BELOW
    axes.set_title(f"{name}: ECDF" + (" (few values per run)" if few else ", share of items at or below"), fontsize=10)
    axes.set_xlabel(f"{name} (value per item)")
    axes.set_ylabel("share of items ≤ value")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def risk_chart(rows: Sequence[dict], title: str) -> Plot:
    """The risk table's rates with their Wilson intervals: a horizontal bar per row (hatched by measure)."""
    require("matplotlib", extra="report")
    from matplotlib.figure import Figure

    shown = [row for row in rows if row.get("rate") is not None]
    inches = max(2.2, 0.32 * len(shown) + 1.2)
    figure = Figure(figsize=(6.0, inches))
    figure.subplots_adjust(left=0.42, right=0.97, top=1 - 0.6 / inches, bottom=0.55 / inches)
    axes = figure.add_subplot()
    measures = list(dict.fromkeys(str(row.get("measure")) for row in shown))
    labelled: set[str] = set()
    for position, row in enumerate(shown):
        rate, low, high = row["rate"], row.get("ci_low", row["rate"]), row.get("ci_high", row["rate"])
        measure = str(row.get("measure"))
        which = measures.index(measure) + 1
        label = None if measure in labelled else measure
        labelled.add(measure)
        axes.barh(position, rate, height=0.6, color=GREYS[which], edgecolor="black", hatch=HATCHES[which], label=label)
        axes.errorbar(rate, position, xerr=[[rate - low], [high - rate]], color="black", capsize=3, linewidth=1)
    names = [f"{row.get('kind')} / {row.get('category')} (n={row.get('n')})" for row in shown]
    axes.set_yticks(range(len(shown)), names, fontsize=7)
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_xlabel("rate (share of judged items), 95% Wilson interval")
    axes.set_title(title, fontsize=10, loc="left")
    axes.grid(axis="x", alpha=0.3)
    if shown:
        axes.legend(fontsize=7, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=len(measures), frameon=False)
    return Plot(f"risk_{file_name(title)}.png", title, render(figure), "risk")
