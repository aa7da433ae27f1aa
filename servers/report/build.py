"""Build a report: read the sources, summarise, plot, render; then write every file into one folder.

Everything is computed in memory first, so a bad input fails before any file exists; each file is
then written atomically (a reader never sees half a report.html).

files = write_report(["output/eval_trec_20260101_120000"], labels={}, out_dir=None, save_path="output/report",
                     bootstrap_resamples=1000, confidence=0.95, seed=42, max_table_rows=2000)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers.report import charts, page, sources, stats
from servers.report.groups import group_summaries, slice_views
from servers.report.judged.charts import judged_chart
from servers.report.judged.tables import title
from servers.report.output import check_settings, output_folder, write_bytes
from servers.report.plots import unique_names
from ultra_base.errors import InputError
from ultra_kit.files import atomic_write_text


@dataclass(frozen=True)
class ReportFiles:
    """What a report wrote, and what it summarised."""

    folder: Path
    report_path: Path
    summary_csv_path: Path
    per_query_csv_path: Path
    plot_paths: list[Path]
    runs: list[str]
    summary: list[stats.Summary]

    def as_result(self) -> dict[str, Any]:
        """The ``report`` tool's result: the paths as text, the summary rows with NaN as null."""
        return {
            "report_path": str(self.report_path),
            "summary_csv_path": str(self.summary_csv_path),
            "per_query_csv_path": str(self.per_query_csv_path),
            "plot_paths": [str(p) for p in self.plot_paths],
            "runs": self.runs,
            "summary": [{k: None if v != v else v for k, v in vars(row).items()} for row in self.summary],
        }


def write_report(
    paths: Sequence[str],
    *,
    labels: Mapping[str, str],
    out_dir: str | os.PathLike[str] | None,
    save_path: str,
    bootstrap_resamples: int,
    confidence: float,
    seed: int,
    max_table_rows: int,
    headline_metrics: Sequence[str],
    examples_per_metric: int,
    max_scatter_points: int,
    texts: Mapping[str, Mapping[str, str]] | None = None,
) -> ReportFiles:
    """Write report.html, summary.csv, per_query.csv and a PNG per plot into ``out_dir`` (or a new
    ``report_<timestamp>`` folder under ``save_path``); ``headline_metrics``: the key metrics of the headline
    (default: the first of each tool whose values vary); ``texts`` ({id: question/answer}) fill in the
    per-query table where the sources hold none."""
    check_settings(bootstrap_resamples=bootstrap_resamples, confidence=confidence, max_table_rows=max_table_rows)
    collected = sources.collect(paths, labels)
    for run in collected.runs:
        for key, text in (texts or {}).items():
            run.texts.setdefault(str(key), dict(text))
    summary = stats.summarise(collected.runs, resamples=bootstrap_resamples, confidence=confidence, seed=seed)
    summary += group_summaries(collected.runs, resamples=bootstrap_resamples, confidence=confidence, seed=seed)
    drawn = charts.charts(collected.runs) if collected.runs else charts.Charts([], [], {})
    risks = [charts.risk_chart(risk["rows"], f"risk table: {risk['label']}") for risk in collected.risks]
    judged = unique_names([judged_chart(item, title(item, item["label"])) for item in collected.judged])
    slices = slice_views(collected.runs, summary, confidence=confidence) if collected.runs else []
    figures = [*risks, *judged, *drawn.plots, *(view["plot"] for view in slices if view["plot"])]
    settings: dict[str, Any] = {"confidence": confidence, "resamples": bootstrap_resamples, "seed": seed}
    comparison = _comparison(collected, settings, examples_per_metric, max_scatter_points)
    figures += comparison.scatters if comparison else []
    html = page.render_html(
        collected,
        summary,
        drawn,
        risks,
        judged,
        max_table_rows=max_table_rows,
        headline_metrics=headline_metrics,
        examples=examples_per_metric,
        comparison={"html": comparison.html} if comparison else None,
        slices=slices,
        **settings,
    )
    summary_text = page.summary_csv(summary, **settings)
    per_query_text = page.per_query_csv(collected)
    folder = output_folder(out_dir, save_path)
    plot_paths = [write_bytes(folder / figure.name, figure.png) for figure in figures]
    summary_path = atomic_write_text(folder / "summary.csv", summary_text)
    per_query_path = atomic_write_text(folder / "per_query.csv", per_query_text)
    report = atomic_write_text(folder / "report.html", html)
    return ReportFiles(
        folder=folder,
        report_path=report,
        summary_csv_path=summary_path,
        per_query_csv_path=per_query_path,
        plot_paths=plot_paths,
        runs=[run.label for run in collected.runs],
        summary=summary,
    )


def _comparison(collected: Any, settings: dict[str, Any], per_metric: int, points: int) -> Any:
    """With several runs, their paired comparison; None when they share no item id (said in a note)."""
    from servers.report.compare.build import section

    if len(collected.runs) < 2:
        return None
    try:
        return section(
            collected.runs,
            resamples=settings["resamples"],
            confidence=settings["confidence"],
            seed=settings["seed"],
            examples_per_metric=per_metric,
            max_scatter_points=points,
        )
    except InputError as exc:
        collected.notes.append(f"no comparison: {exc}")
        return None
