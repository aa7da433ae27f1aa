"""A comparison of runs: computed once (``section``), shown as a section of report.html and as compare.html
(``write_compare``: compare.html, comparison.json and the scatter PNGs in one folder, written after everything
is computed, each file atomically).

files = write_compare(["output/run_a", "output/run_b"], labels={}, out_dir=None, save_path="output/report",
                      bootstrap_resamples=1000, confidence=0.95, seed=42, examples_per_metric=10,
                      max_scatter_points=2000, groups=[])
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from servers.report.compare import examples, pairs, render
from servers.report.compare.latency import quantile_rows
from servers.report.model import Run, counts_of
from servers.report.plots import Plot

NUGGET_ROWS = 200  # queries with gained or lost nuggets shown on the page


@dataclass(frozen=True)
class Section:
    """A computed comparison: its rows, the terminal table, the page section (HTML) and its scatters."""

    rows: list[pairs.Row]
    text: str
    html: str
    scatters: list[Plot]
    document: dict[str, Any]


def section(
    runs: Sequence[Run],
    *,
    resamples: int,
    confidence: float,
    seed: int,
    examples_per_metric: int,
    max_scatter_points: int,
) -> Section:
    """Compare ``runs`` (matched on ids; InputError when one shares no id with the first)."""
    from servers.report.page import templates

    matched, rows = pairs.compare(runs, resamples=resamples, confidence=confidence, seed=seed)
    rows += quantile_rows(runs, matched, resamples=resamples, confidence=confidence, seed=seed)  # latency p50, p95
    scatters, scatter_note = render.scatters(runs, matched, limit=max_scatter_points, seed=seed)
    changes = examples.changes(runs, matched, per_metric=examples_per_metric)
    nuggets = examples.nugget_changes(runs, matched, limit=NUGGET_ROWS)
    notes = [
        f"{runs[pair.b].label} and {runs[pair.a].label} share {len(pair.ids)} item ids "
        f"(of {len(runs[pair.a].ids)} and {len(runs[pair.b].ids)}); only those are compared"
        for pair in matched
        if len(pair.ids) < max(len(runs[pair.a].ids), len(runs[pair.b].ids))
    ]
    template = templates(keep_trailing_newline=False).get_template("comparison.html")
    html = template.render(
        confidence=f"{confidence:.0%}",
        alpha=f"{1 - confidence:.2g}",
        resamples=resamples,
        seed=seed,
        notes=notes,
        ranx=render.ranx_table(runs, rows),
        columns=render.page_table(rows)[0],
        rows=render.page_table(rows)[1],
        scatters=[{"title": p.title, "data": base64.b64encode(p.png).decode("ascii")} for p in scatters],
        scatter_note=scatter_note,
        changes=changes,
        per_metric=examples_per_metric,
        nuggets=nuggets,
    )
    document = {
        "runs": [
            {"letter": render.letter(i), "label": run.label, "n_items": len(run.ids)} for i, run in enumerate(runs)
        ],
        "rows": [{k: None if isinstance(v, float) and v != v else v for k, v in asdict(row).items()} for row in rows],
        "settings": {"bootstrap_resamples": resamples, "confidence": confidence, "seed": seed},
        "verdict": render.verdict(rows, confidence),
        "counts": sorted(counts_of(runs)),  # num_ret ...: numbers of things, not compared
        "changes": changes,
        "nuggets": nuggets,
    }
    return Section(rows, render.terminal_table(rows, confidence, [run.label for run in runs]), html, scatters, document)


@dataclass(frozen=True)
class CompareFiles:
    """What a comparison wrote."""

    compare_path: Path
    json_path: Path
    plot_paths: list[Path]
    runs: list[str]
    section: Section


def write_compare(
    paths: Sequence[str],
    *,
    labels: Mapping[str, str],
    out_dir: str | os.PathLike[str] | None,
    save_path: str,
    bootstrap_resamples: int,
    confidence: float,
    seed: int,
    examples_per_metric: int,
    max_scatter_points: int,
    groups: Sequence[str],
) -> CompareFiles:
    """Read the runs of ``paths`` (run folders or result files), compare them, write the files; with
    ``groups`` [A, B], the two groups of the one run given (``servers.report.groups``: unpaired)."""
    from servers.report import sources
    from servers.report.output import check_settings, output_folder, write_bytes
    from servers.report.page import templates
    from ultra_kit.factory import __version__
    from ultra_kit.files import atomic_write_text

    check_settings(bootstrap_resamples=bootstrap_resamples, confidence=confidence, max_table_rows=1)
    runs = sources.collect(paths, labels).runs
    if groups:  # two groups of one run: an unpaired comparison
        from servers.report.groups import group_section, table

        runs, rows, html, document = group_section(
            runs, groups, resamples=bootstrap_resamples, confidence=confidence, seed=seed
        )
        computed = Section(rows, table(rows, confidence), html, [], document)
    else:
        computed = section(
            runs,
            resamples=bootstrap_resamples,
            confidence=confidence,
            seed=seed,
            examples_per_metric=examples_per_metric,
            max_scatter_points=max_scatter_points,
        )
    template = templates(keep_trailing_newline=True).get_template("compare.html")
    page = template.render(
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
        runs=computed.document["runs"],
        verdict=computed.document["verdict"],
        section=computed.html,
    )
    folder = output_folder(out_dir, save_path, "compare")
    plot_paths = [write_bytes(folder / plot.name, plot.png) for plot in computed.scatters]
    json_path = atomic_write_text(folder / "comparison.json", json.dumps(computed.document, indent=1))
    compare_path = atomic_write_text(folder / "compare.html", page)
    return CompareFiles(compare_path, json_path, plot_paths, [run.label for run in runs], computed)
