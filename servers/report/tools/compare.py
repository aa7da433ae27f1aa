"""``compare``: runs (run folders or result files) compared item by item, matched on ids."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.report.tools.report import ExamplesParam, ScatterParam
from ultra_base.errors import InputError
from ultra_kit.factory import tool_hints
from ultra_kit.limits.caps import capped
from ultra_kit.paths.output_root import check_inside_output


class CompareResult(TypedDict):
    """Where the comparison is, and its rows."""

    compare_path: str
    json_path: str
    plot_paths: list[str]
    runs: list[str]
    rows: list[dict[str, Any]]
    counts: list[str]  # the runs' counts (num_ret ...): numbers of things, never compared
    text: str


@tool_hints(read_only=False, idempotent=True)
def compare(
    run_paths: Annotated[
        list[str], Field(description="run folders or result files holding two or more runs: A B [C ...]")
    ],
    *,
    out_dir: Annotated[
        str | None, Field(description="write into this folder as is (default: a new compare_<timestamp>/ in save_path)")
    ] = None,
    labels: Annotated[dict[str, str], Field(description="display names: {name: one of the paths}")],
    save_path: Annotated[str, Field(description="folder; the comparison goes to compare_<timestamp>/ inside it")],
    bootstrap_resamples: Annotated[int, Field(description="resamples of the randomisation test and bootstrap", ge=1)],
    confidence: Annotated[
        float, Field(description="level of the intervals; significance at 1 - confidence", gt=0, lt=1)
    ],
    seed: Annotated[int, Field(description="seed of the tests and of the scatters' sample", ge=0)],
    examples_per_metric: ExamplesParam,
    max_scatter_points: ScatterParam,
    groups: Annotated[
        list[str],
        Field(description="two groups [A, B] of the one run given (its benchmark.group_by values), compared unpaired"),
    ],
) -> CompareResult:
    """Compare runs item by item (matched on ids, never positions; runs sharing no id are refused).

    For every metric two runs share: each run's mean, the paired difference with its bootstrap interval, the
    paired randomisation p-value with Holm across metrics, and wins/ties/losses (better / equal / worse: lower
    is better for a metric its result file declares so, e.g. toxicity); counts (num_ret) are not compared.
    Writes compare.html (ranx-style table with significance letters, per-item scatters, the largest regressions
    and improvements with both answers and both judges' reasons, vital nuggets gained and lost) and
    comparison.json; returns the aligned text table.

    With ``groups`` [A, B] and one run (read with ``benchmark.group_by``): group B against group A of that run.
    The groups hold different items, so the test is unpaired (a permutation of the group labels, a bootstrap
    resampling each group on its own), with Holm across metrics; no scatters, examples or wins/ties/losses.
    """
    from servers.report.compare.build import write_compare

    paths = [path for path in run_paths if path]
    if not paths and not labels:
        raise InputError("compare needs run folders or result files holding two or more runs, e.g. [runs/a, runs/b]")
    if out_dir is not None:
        check_inside_output(out_dir, setting="out_dir")
    capped(bootstrap_resamples, "bootstrap_resamples", server="report", name="bootstrap_resamples", minimum=1)
    files = write_compare(
        paths,
        labels=labels,
        out_dir=out_dir,
        save_path=save_path,
        bootstrap_resamples=bootstrap_resamples,
        confidence=confidence,
        seed=seed,
        examples_per_metric=examples_per_metric,
        max_scatter_points=max_scatter_points,
        groups=groups,
    )
    return {
        "compare_path": str(files.compare_path),
        "json_path": str(files.json_path),
        "plot_paths": [str(p) for p in files.plot_paths],
        "runs": files.runs,
        "rows": files.section.document["rows"],
        "counts": files.section.document["counts"],
        "text": files.section.text,
    }


TOOLS = [compare]
