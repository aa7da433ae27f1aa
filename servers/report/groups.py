"""Slices of one run by a group (``benchmark.group_by``: app version, route, model ...): each metric per
group with its bootstrap interval (the report's summary rows and its "Per group" section, ``slice_views``), and
two groups compared (``compare`` with ``groups``).

The groups reach the report through the run folder: ``memory.json`` holds ``group_ls`` aligned with ``id_ls``
(``Run.groups``: id -> group). Two groups hold different items, so their comparison is unpaired: the
difference of the means B - A, its interval from a bootstrap that resamples each group on its own, and
a two-sided permutation p-value (the items' group labels shuffled, ``resamples`` times, seeded; p =
(1 + shuffles at least as extreme) / (1 + resamples)), Holm across the metrics. Wins/ties/losses do not
exist without pairs (0 each). The same computation compares two separate runs of those items
(``unpaired``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from servers.report.cells import number
from servers.report.compare.pairs import Row
from servers.report.model import Run, counts_of
from servers.report.plots import Plot, file_name, metric_names, render
from servers.report.stats import Summary, resample_means, summarise
from ultra_base.errors import InputError

UNPAIRED = "unpaired permutation"


def label_of(run: Run, value: str) -> str:
    """The label of one group of ``run``: ``<run> [<group_by>=<value>]``."""
    return f"{run.label} [{run.group_by or 'group'}={value}]"


def group_values(run: Run) -> list[str]:
    """``run``'s groups in first-seen order (an item without one is in the group "")."""
    return list(dict.fromkeys(run.groups.get(key, "") for key in run.ids))


def split(run: Run, values: Sequence[str] | None = None) -> list[Run]:
    """``run``'s items by group (every group in first-seen order, or the ``values`` asked for)."""
    present = group_values(run)
    if values is None:
        values = present
    for value in values:
        if value not in present:
            raise InputError(
                f"run {run.label!r} has no group {value!r} (its {run.group_by or 'group'} values: {present})"
            )
    parts = []
    for value in values:
        positions = np.array([i for i, key in enumerate(run.ids) if run.groups.get(key, "") == value], dtype=np.intp)
        ids = [run.ids[i] for i in positions]
        part = Run(label=label_of(run, value), ids=ids, sources=list(run.sources))
        part.columns = {name: column[positions] for name, column in run.columns.items()}
        part.texts = {key: run.texts[key] for key in ids if key in run.texts}
        part.lower_is_better, part.kinds = set(run.lower_is_better), dict(run.kinds)
        part.group_by = run.group_by
        parts.append(part)
    return parts


def group_summaries(runs: Sequence[Run], *, resamples: int, confidence: float, seed: int) -> list[Summary]:
    """A summary row per (run with groups, group, metric): the mean, median and bootstrap interval of the
    group's items (the same computation as a run's own rows)."""
    rows: list[Summary] = []
    for run in runs:
        if run.groups:
            rows += summarise(split(run), resamples=resamples, confidence=confidence, seed=seed)
    return rows


def compare_groups(run: Run, values: Sequence[str], *, resamples: int, confidence: float, seed: int) -> list[Row]:
    """Two groups of one run compared (unpaired): B = ``values[1]`` against A = ``values[0]``."""
    if not run.groups:
        raise InputError(
            f"run {run.label!r} has no groups: read its data with benchmark.group_by (memory.json then holds group_ls)"
        )
    if len(values) != 2 or values[0] == values[1]:
        raise InputError(f"groups: give two different groups to compare, A and B; got {list(values)}")
    first, second = split(run, values)
    return unpaired(first, second, resamples=resamples, confidence=confidence, seed=seed)


def unpaired(a: Run, b: Run, *, resamples: int, confidence: float, seed: int) -> list[Row]:
    """A row per metric both runs have: B's mean against A's over different items (see the module)."""
    from ultra_trec.significance import holm

    tail = 100 * (1 - confidence) / 2
    found = []
    counts = counts_of([a, b])  # numbers of things (num_ret), never compared as metrics
    for name in (n for n in a.columns if n in b.columns and n not in counts):
        x, y = a.columns[name], b.columns[name]
        x, y = x[np.isfinite(x)], y[np.isfinite(y)]
        if len(x) and len(y):
            found.append((name, x, y))
    if not found:
        raise InputError(f"{a.label!r} and {b.label!r} have no metric with values in both")
    rows = []
    p_values = np.array([_permutation_p(x, y, resamples, seed) for _, x, y in found])
    for (name, x, y), p, p_holm in zip(found, p_values, holm(p_values), strict=True):
        draws_a = resample_means(x[:, None], resamples=resamples, seed=seed)[:, 0]
        draws_b = resample_means(y[:, None], resamples=resamples, seed=seed + 1)[:, 0]
        low, high = np.percentile(draws_b - draws_a, [tail, 100 - tail])
        rows.append(
            Row(
                metric=name,
                a=a.label,
                b=b.label,
                n=len(x) + len(y),
                a_mean=float(x.mean()),
                b_mean=float(y.mean()),
                diff=float(y.mean() - x.mean()),
                ci_low=float(low),
                ci_high=float(high),
                p_value=float(p),
                p_holm=float(p_holm),
                wins=0,
                ties=0,
                losses=0,
                significant=bool(p_holm < 1 - confidence),
                test=UNPAIRED,
                higher_is_better=not (name in a.lower_is_better or name in b.lower_is_better),
            )
        )
    return rows


def _permutation_p(x: np.ndarray, y: np.ndarray, resamples: int, seed: int) -> float:
    """Two-sided p of mean(y) - mean(x) under exchangeable group labels."""
    pooled = np.concatenate([x, y])
    observed = abs(y.mean() - x.mean())
    rng = np.random.default_rng(seed)
    extreme = 0
    for _ in range(resamples):
        shuffled = rng.permutation(pooled)
        extreme += abs(shuffled[len(x) :].mean() - shuffled[: len(x)].mean()) >= observed - 1e-12
    return (1 + extreme) / (1 + resamples)


def group_section(
    runs: Sequence[Run], values: Sequence[str], *, resamples: int, confidence: float, seed: int
) -> tuple[list[Run], list[Row], str, dict[str, Any]]:
    """The two groups of the one run in ``runs`` as runs, and their comparison as ``compare`` writes it: the
    rows, the page section (HTML) and comparison.json's document."""
    from dataclasses import asdict

    from servers.report.compare import render
    from servers.report.page import templates

    if len(runs) != 1:
        raise InputError(f"groups compares two groups of one run; got {len(runs)} runs: {[r.label for r in runs]}")
    parts = split(runs[0], values) if runs[0].groups else []
    rows = compare_groups(runs[0], values, resamples=resamples, confidence=confidence, seed=seed)
    note = (
        f"{parts[1].label} ({len(parts[1].ids)} items) against {parts[0].label} ({len(parts[0].ids)} items): the "
        "groups hold different items, so the test is unpaired (a permutation of the group labels; the interval "
        "resamples each group on its own); there are no per-item wins, ties or losses"
    )
    html = (
        templates(keep_trailing_newline=False)
        .get_template("comparison.html")
        .render(
            confidence=f"{confidence:.0%}",
            alpha=f"{1 - confidence:.2g}",
            resamples=resamples,
            seed=seed,
            notes=[note],
            ranx=render.ranx_table(parts, rows),
            columns=render.page_table(rows)[0],
            rows=render.page_table(rows)[1],
            scatters=[],
            scatter_note="",
            changes=[],
            per_metric=0,
            nuggets=[],
        )
    )
    document = {
        "runs": [
            {"letter": render.letter(i), "label": part.label, "n_items": len(part.ids)} for i, part in enumerate(parts)
        ],
        "rows": [{k: None if isinstance(v, float) and v != v else v for k, v in asdict(row).items()} for row in rows],
        "settings": {"bootstrap_resamples": resamples, "confidence": confidence, "seed": seed, "groups": list(values)},
        "verdict": render.verdict(rows, confidence),
        "counts": sorted(counts_of(parts)),  # num_ret ...: numbers of things, not compared
        "changes": [],
        "nuggets": [],
    }
    return parts, rows, html, document


def table(rows: Sequence[Row], confidence: float) -> str:
    """The rows as an aligned text table, with what the test is."""
    head = ["metric", "A", "B", "n", "mean A", "mean B", "B - A", "CI", "p", "p (Holm)", ""]
    cells = [head] + [
        [
            r.metric,
            r.a,
            r.b,
            str(r.n),
            f"{r.a_mean:.4g}",
            f"{r.b_mean:.4g}",
            f"{r.diff:+.4g}",
            f"[{r.ci_low:+.4g}, {r.ci_high:+.4g}]",
            f"{r.p_value:.3g}",
            f"{r.p_holm:.3g}",
            "*" if r.significant else "",
        ]
        for r in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append(
        f"* = significant at {1 - confidence:.2g} after Holm across metrics. The groups hold different items: "
        "unpaired test (permutation of the group labels; bootstrap interval resampling each group on its own)."
    )
    return "\n".join(lines) + "\n"


# The report's "Per group" section: for each run whose items carry groups, a row per group (its items, and every
# metric's mean with its bootstrap interval, from the summary's group rows) and a small chart of the same means and
# intervals, a panel per metric, a line per group.

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
                shown = row is not None and row.n
                cells.append(f"{number(row.mean)} [{number(row.ci_low)}, {number(row.ci_high)}]" if shown else "")
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
