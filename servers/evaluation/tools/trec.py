"""MCP tools for retrieval runs: ``evaluate_trec`` and ``evaluate_trec_pvalue`` (thin faces over pure code).

Settings (keys of parameter.yaml) give file paths and options; the optional variables ``run``,
``qrels``, ``run_new`` and ``run_old`` let an earlier pipeline step pass a run instead: a path, a
``{qid: {docid: score}}`` mapping or a ``{qid: [docid, ...]}`` ranked list. A variable, when given,
takes precedence over the matching ``*_path`` setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

from ultra_kit.factory import tool_hints
from ultra_kit.files import atomic_write_text, compact_json, result_path
from ultra_kit.inprocess import OUTPUTS_FROM
from ultra_kit.limits.caps import capped
from ultra_kit.paths.output_root import check_save_path
from ultra_kit.progress import progress_from_context
from ultra_trec.measures import describe_names

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

RunInput = str | dict[str, dict[str, float]] | dict[str, list[str]]
QrelsInput = str | dict[str, dict[str, int]]


class TrecCounts(TypedDict):
    """trec_eval's counts over the evaluated queries, and how the query sets differed."""

    num_q: int
    num_ret: int
    num_rel: int
    num_rel_ret: int
    queries_missing_in_run: int
    queries_only_in_run: int


def check_measure_count(ir_metrics: Sequence[str], ks: Sequence[int]) -> None:
    """Refuse more cutoffs than caps.cutoffs, or more measures (ir_metrics with the bare names expanded over ks) than
    caps.measures: each measure is scored for every query (and resampled by evaluate_trec_pvalue)."""
    from ultra_trec.measures import parse_measures

    capped(len(ks), "ks (cutoffs)", server="evaluation", name="cutoffs")  # before the expansion over them
    measures = parse_measures(list(ir_metrics), ks)
    capped(len(measures), "ir_metrics expanded over ks (measures)", server="evaluation", name="measures")


# eval_res's keys follow from the settings (ultra sweep checks --metric with them before any trial)
EVAL_RES_KEYS = {"keys": "ultra_trec.measures:result_names", "settings": ["ir_metrics", "ks", "names"]}


@with_config(ConfigDict(json_schema_extra={OUTPUTS_FROM: {"eval_res": EVAL_RES_KEYS}}))
class EvaluateTrecResult(TypedDict):
    """The aggregate per measure, the counts, and the JSON file holding per-query values and settings."""

    eval_res: dict[str, float]
    counts: TrecCounts
    result_path: str


class PValueRow(TypedDict):
    """One (new run, metric) comparison with the baseline."""

    run: str
    metric: str
    A_mean: float
    B_mean: float
    diff: float
    p_value: float
    p_value_adjusted: float
    significant: bool  # p_value_adjusted < alpha (after the correction)
    significant_raw: bool  # p_value < alpha (before any correction)
    t_test_p_value: float | None
    ci_low: float
    ci_high: float
    effect_size: float | None


class PValueResult(TypedDict):
    """UltraRAG's ``eval_res`` ({metric: row}; {"run/metric": row} for several runs), the table and the file."""

    eval_res: dict[str, PValueRow]
    table: list[PValueRow]
    num_q: int
    result_path: str


MetricsParam = Annotated[
    Sequence[str], Field(description=f"retrieval measures (at most caps.measures, once expanded): {describe_names()}")
]
KsParam = Annotated[
    Sequence[int],
    Field(description="cutoffs for bare recall/ndcg/precision/success (at most caps.cutoffs); [] for none"),
]
LevelParam = Annotated[int, Field(description="a document is relevant when rel >= relevance_level (trec_eval -l)")]
SavePathParam = Annotated[str, Field(description="directory (file <tool>_<timestamp>.json) or file name")]
QrelsPathParam = Annotated[str, Field(description="TREC qrels file: qid iter docid rel")]
NamesParam = Annotated[
    Literal["ultrarag", "trec_eval"],
    Field(description="result keys: ultrarag (P@5, ndcg@10, mrr) or trec_eval (P_5, ndcg_cut_10, recip_rank)"),
]


@tool_hints(read_only=False, idempotent=True)
def evaluate_trec(
    *,
    run_path: Annotated[str, Field(description="TREC run file: qid Q0 docid rank score tag")],
    qrels_path: QrelsPathParam,
    ir_metrics: MetricsParam,
    ks: KsParam,
    relevance_level: LevelParam,
    max_depth: Annotated[int | None, Field(description="cut each ranking at this rank (trec_eval -M)")],
    names: NamesParam,
    save_path: SavePathParam,
    run: Annotated[
        RunInput | None,
        Field(
            description="a run from an earlier step (overrides run_path): path, {qid: {docid: score}} or {qid: [docid]}"
        ),
    ] = None,
    qrels: Annotated[
        QrelsInput | None, Field(description="qrels instead of qrels_path: a path or {qid: {docid: grade}}")
    ] = None,
    ctx: Context | None = None,
) -> EvaluateTrecResult:
    """Score a retrieval run against qrels exactly as trec_eval 10.0 does (with -c).

    Measures: those named in ir_metrics (every trec_eval 10.0 measure; the list is in its
    description), plus the counts num_q, num_ret, num_rel, num_rel_ret. Ties in score are broken
    by docid descending (byte order); qrels queries missing from the run score 0 and count in the
    mean; run-only queries are ignored. Returns the summary of each measure (eval_res; keys as
    ``names`` says) and writes a JSON file with aggregate, per_query, counts and settings (runid
    and relstring, which are text, are per query only).
    """
    from ultra_trec.engine import evaluate

    check_save_path(save_path, "evaluate_trec", ".json")  # before the work, not after it
    check_measure_count(ir_metrics, ks)
    report = progress_from_context(ctx)
    report(0, 2, "reading and ranking")
    result = evaluate(
        qrels if qrels is not None else qrels_path,
        run if run is not None else run_path,
        ir_metrics,
        ks=ks,
        relevance_level=relevance_level,
        max_depth=max_depth,
    ).renamed(names)
    report(1, 2, "writing the result file")
    data = result.to_dict()
    data["settings"].update({"ir_metrics": list(ir_metrics), "ks": list(ks), "tool": "evaluate_trec"})
    path = atomic_write_text(result_path(save_path, "evaluate_trec"), compact_json(data))
    report(2, 2, "done")
    return {"eval_res": data["aggregate"], "counts": data["counts"], "result_path": str(path)}


@tool_hints(read_only=False, idempotent=True)
def evaluate_trec_pvalue(
    *,
    run_new_path: Annotated[str, Field(description="the new run (A)")],
    run_old_path: Annotated[str, Field(description="the baseline run (B)")],
    qrels_path: QrelsPathParam,
    run_paths: Annotated[
        list[str] | None,
        Field(description="several new runs, each tested against run_old_path (replaces run_new_path)"),
    ],
    ir_metrics: MetricsParam,
    ks: KsParam,
    relevance_level: LevelParam,
    n_resamples: Annotated[int, Field(description="random sign flips and bootstrap samples", ge=1)],
    seed: Annotated[int, Field(description="random seed: the same inputs and seed give the same p-values", ge=0)],
    alpha: Annotated[float, Field(description="significance level (and 1 - confidence of the interval)", gt=0, lt=1)],
    correction: Annotated[Literal["holm", "none"], Field(description="holm: adjust over all rows; none: raw p")],
    names: NamesParam,
    save_path: SavePathParam,
    run_new: Annotated[RunInput | None, Field(description="the new run from an earlier step (path or mapping)")] = None,
    run_old: Annotated[
        RunInput | None, Field(description="the baseline from an earlier step (path or mapping)")
    ] = None,
    ctx: Context | None = None,
) -> PValueResult:
    """Test whether new runs beat a baseline, per metric, with paired tests over queries.

    Two-sided paired randomisation (sign-flip) test (exact enumeration when 2^queries <= n_resamples),
    paired t-test, bootstrap confidence interval of the mean difference, effect size mean(d)/sd(d),
    Holm-adjusted p-values. Each row has significant (adjusted p < alpha) and significant_raw
    (p < alpha). Queries missing from a run score 0. Deterministic for a given seed.
    """
    from servers.evaluation.pvalue import run_pvalue

    check_save_path(save_path, "evaluate_trec_pvalue", ".json")
    capped(n_resamples, "n_resamples", server="evaluation", name="n_resamples", minimum=1)
    check_measure_count(ir_metrics, ks)  # each measure is resampled n_resamples times
    runs = {"run_new_path": run_new_path, "run_old_path": run_old_path, "run_paths": run_paths}
    return run_pvalue(  # type: ignore[return-value]
        **runs,
        qrels_path=qrels_path,
        ir_metrics=ir_metrics,
        ks=ks,
        relevance_level=relevance_level,
        n_resamples=n_resamples,
        seed=seed,
        alpha=alpha,
        correction=correction,
        names=names,
        save_path=save_path,
        run_new=run_new,
        run_old=run_old,
        report=progress_from_context(ctx),
    )


TOOLS = [evaluate_trec, evaluate_trec_pvalue]
