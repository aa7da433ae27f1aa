"""``report``: result files and run folders turned into one self-contained HTML page."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from ultra_base.errors import InputError
from ultra_kit.factory import tool_hints
from ultra_kit.limits.caps import capped
from ultra_kit.paths.output_root import check_inside_output

ExamplesParam = Annotated[
    int,
    Field(
        description="comparison: the largest regressions and improvements shown per metric; "
        "a label store: the largest judge-people disagreements shown",
        ge=0,
    ),
]
ScatterParam = Annotated[
    int, Field(description="comparison: items per run in each scatter; beyond, a seeded sample", ge=1)
]


class ReportResult(TypedDict):
    """Where the report is, and what went into it."""

    report_path: str
    summary_csv_path: str
    per_query_csv_path: str
    plot_paths: list[str]
    runs: list[str]
    summary: list[dict[str, Any]]


@tool_hints(read_only=False, idempotent=True)
def report(
    *,
    result_path: Annotated[
        str | None, Field(description="a result file or run folder from an earlier step (e.g. evaluate's result_path)")
    ] = None,
    q_ls: Annotated[list[str] | None, Field(description="the questions, shown in the per-query table")] = None,
    pred_ls: Annotated[
        list[str | None] | None, Field(description="the answers, shown in the per-query table (None: failed)")
    ] = None,
    id_ls: Annotated[list[Any] | None, Field(description="the item ids q_ls and pred_ls belong to")] = None,
    out_dir: Annotated[
        str | None, Field(description="write into this folder as is (default: a new report_<timestamp>/ in save_path)")
    ] = None,
    result_paths: Annotated[list[str], Field(description="more result files or run folders on the same page")],
    labels: Annotated[dict[str, str], Field(description="display names: {name: one of the paths}")],
    save_path: Annotated[str, Field(description="folder; the report goes to report_<timestamp>/ inside it")],
    bootstrap_resamples: Annotated[int, Field(description="resamples of the bootstrap interval of each mean", ge=1)],
    confidence: Annotated[float, Field(description="level of the bootstrap interval", gt=0, lt=1)],
    seed: Annotated[int, Field(description="seed of the bootstrap and of the per-query table's sample", ge=0)],
    max_table_rows: Annotated[int, Field(description="per-query rows on the page; beyond, a seeded sample", ge=1)],
    headline_metrics: Annotated[
        list[str], Field(description="key metrics at the top of the page; [] = the first metric of each tool")
    ],
    examples_per_metric: ExamplesParam,
    max_scatter_points: ScatterParam,
) -> ReportResult:
    """Write report.html (self-contained: headline, summary with bootstrap CIs, a chart per metric by its kind,
    the risk table, per-query table with the judges' verdicts), PNGs and CSVs.

    Reads every result file the project's tools write (evaluate*, evaluate_trec*, the judges, trec_rag_table,
    risk_table, consistency, ppi, compare_judged, fill_qrels, sweeps) and `ultra run` folders; several runs are
    shown side by side, joined on query ids, with their paired comparison.
    """
    from servers.report.build import write_report
    from servers.report.sources import given_texts

    paths = [p for p in [result_path, *result_paths] if p]
    if not paths and not labels:
        raise InputError("nothing to report: give result_path (a result file or run folder) or result_paths")
    texts = given_texts(id_ls, q_ls, pred_ls)
    if out_dir is not None:
        check_inside_output(out_dir, setting="out_dir")
    capped(bootstrap_resamples, "bootstrap_resamples", server="report", name="bootstrap_resamples", minimum=1)
    files = write_report(
        paths,
        labels=labels,
        out_dir=out_dir,
        save_path=save_path,
        bootstrap_resamples=bootstrap_resamples,
        confidence=confidence,
        seed=seed,
        max_table_rows=max_table_rows,
        headline_metrics=headline_metrics,
        examples_per_metric=examples_per_metric,
        max_scatter_points=max_scatter_points,
        texts=texts,
    )
    return files.as_result()  # type: ignore[return-value]


TOOLS = [report]
