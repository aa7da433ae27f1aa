"""The charts of the judged-numbers files (``servers.report.judged.tables``): intervals drawn as a forest plot, a row
per system or pair, one line per estimate told apart by marker and line style (greyscale-readable).

* ppi: per system the PPI++, classical PPI, judge-only and human-only intervals; below, the paired differences;
* compare_judged: per pair the interval with the judge's noise and the one taking the judge as exact;
* fill_qrels: per run and measure the value before and after filling the holes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from servers.report.judged.tables import ESTIMATES
from servers.report.plots import Plot, chart_labels, file_name, render
from ultra_base.errors import require

MARKERS = ("o", "s", "^", "D")
LINES = ("-", "--", ":", "-.")
FILLS = ("black", "white", "#8c8c8c", "white")
Row = tuple[str, list[tuple[float | None, float | None, float | None]]]  # label, per series (estimate, low, high)


def _point(estimate: dict[str, Any] | None) -> tuple[float | None, float | None, float | None]:
    ci = (estimate or {}).get("ci")
    low, high = ci if isinstance(ci, list) and len(ci) == 2 else (None, None)
    return (estimate or {}).get("estimate"), low, high


def _forest(axes, rows: Sequence[Row], *, zero: bool) -> None:
    """Every row's series as interval lines with a marker at the estimate, offset within the row."""
    step = 0.7 / max(1, max((len(points) for _, points in rows), default=1))
    for position, (_, points) in enumerate(rows):
        for index, (estimate, low, high) in enumerate(points):
            if estimate is None:
                continue
            y = position - 0.35 + step * (index + 0.5)
            if low is not None and high is not None:
                axes.plot([low, high], [y, y], color="black", linestyle=LINES[index % len(LINES)], linewidth=1.3)
            axes.plot(estimate, y, marker=MARKERS[index % len(MARKERS)], color="black", linestyle="none",
                      markerfacecolor=FILLS[index % len(FILLS)], markersize=5)  # fmt: skip
    if zero:
        axes.axvline(0, color="#737373", linewidth=0.8, linestyle="--")
    axes.set_yticks(range(len(rows)), chart_labels([label for label, _ in rows], 32), fontsize=8)
    axes.set_ylim(len(rows) - 0.5, -0.5)
    axes.grid(axis="x", alpha=0.3)


def _figure(panels: Sequence[int], title: str, series: Sequence[str]):
    """A figure of one forest panel per size in ``panels``; the title and the series' legend above them."""
    from matplotlib.figure import Figure

    heights = [max(1.0, 0.45 * n + 0.3) for n in panels]
    inches = sum(heights) + 0.9 * len(panels) + 0.5
    figure = Figure(figsize=(7.0, inches))
    grid = figure.add_gridspec(len(panels), 1, height_ratios=heights, hspace=0.9)
    figure.subplots_adjust(left=0.3, right=0.97, top=1 - 0.8 / inches, bottom=0.55 / inches)
    figure.suptitle(title, fontsize=10, x=0.02, y=1 - 0.08 / inches, ha="left", va="top")
    axes = [figure.add_subplot(grid[i]) for i in range(len(panels))]
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], color="black", linestyle=LINES[i % len(LINES)], marker=MARKERS[i % len(MARKERS)],
               markerfacecolor=FILLS[i % len(FILLS)], label=name)
        for i, name in enumerate(series)
    ]  # fmt: skip
    figure.legend(handles=handles, fontsize=7, ncols=len(series), loc="upper left", frameon=False,
                  bbox_to_anchor=(0.02, 1 - 0.35 / inches))  # fmt: skip
    return figure, axes


def ppi_chart(document: dict[str, Any], title: str) -> Plot:
    """Per system the four intervals of the human-scale mean; the paired differences in a second panel."""
    systems: list[Row] = [
        (system, [_point(row.get(key) if key else row) for key, _ in ESTIMATES])
        for system, row in document["ppi_res"].items()
    ]
    pairs: list[Row] = [
        (pair, [_point(row.get(key) if key else row) for key, _ in ESTIMATES])
        for pair, row in (document.get("ppi_diff") or {}).items()
        if "skipped" not in row
    ]
    alpha = (document.get("settings") or {}).get("alpha", 0.05)
    series = [name for _, name in ESTIMATES]
    figure, axes = _figure([len(systems)] + ([len(pairs)] if pairs else []), title, series)
    _forest(axes[0], systems, zero=False)
    axes[0].set_xlabel(f"mean on the human scale, {1 - alpha:.0%} interval")
    axes[0].set_ylabel("system")
    if pairs:
        _forest(axes[1], pairs, zero=True)
        axes[1].set_title("paired differences (A - B)", fontsize=9, loc="left")
        axes[1].set_xlabel(f"difference of the means, {1 - alpha:.0%} interval")
        axes[1].set_ylabel("pair")
    return Plot(f"{file_name(title)}.png", title, render(figure), "intervals")


def compare_judged_chart(document: dict[str, Any], title: str) -> Plot:
    """Per pair the difference with its interval counting the judge's noise and taking the judge as exact."""
    rows: list[Row] = []
    for pair, row in document["comparisons"].items():
        diff = row.get("diff")
        rows.append((pair, [(diff, *_point(row.get(key))[1:]) for key in ("with_judge_noise", "judge_as_exact")]))
    alpha = (document.get("settings") or {}).get("alpha", 0.05)
    figure, (axes,) = _figure([len(rows)], title, ["with the judge's noise", "judge taken as exact"])
    _forest(axes, rows, zero=True)
    axes.set_xlabel(f"mean difference A - B, {1 - alpha:.0%} bootstrap interval")
    axes.set_ylabel("pair")
    return Plot(f"{file_name(title)}.png", title, render(figure), "intervals")


def fill_chart(document: dict[str, Any], title: str) -> Plot:
    """Per run and measure the value under the human qrels and under the filled ones."""
    rows: list[Row] = [
        (f"{run} · {measure}", [(row.get("before"), None, None), (row.get("after"), None, None)])
        for run, measures in document["per_run"].items()
        for measure, row in measures.items()
    ]
    figure, (axes,) = _figure([len(rows)], title, ["human qrels (before)", "filled qrels (after)"])
    _forest(axes, rows, zero=False)
    for position, (_, ((before, _, _), (after, _, _))) in enumerate(rows):
        if before is not None and after is not None:
            axes.annotate("", (after, position + 0.175), (before, position - 0.175),
                          arrowprops={"arrowstyle": "->", "color": "#5e5e5e", "linewidth": 0.8})  # fmt: skip
    axes.set_xlabel("measure value (Judged@k: share of the top k that is judged)")
    axes.set_ylabel("run · measure")
    return Plot(f"{file_name(title)}.png", title, render(figure), "before-after")


CHARTS = {"ppi": ppi_chart, "compare_judged": compare_judged_chart, "fill_qrels": fill_chart}


def judged_chart(judged: dict[str, Any], title: str) -> Plot:
    """The chart of one judged-numbers file (matplotlib: extra ``report``)."""
    require("matplotlib", extra="report")
    return CHARTS[judged["tool"]](judged["document"], title)
