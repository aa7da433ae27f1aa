"""MCP tools for judged numbers with honest uncertainty: ``ppi`` (a human-corrected mean per system and per
pair of systems) and ``compare_judged`` (a paired comparison that counts the judge's own noise).

Thin faces over ``servers.evaluation.judged``; settings come from parameter.yaml.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.evaluation.judged.bootstrap import compare_systems
from servers.evaluation.judged.estimates import pair_estimates, system_estimates
from servers.evaluation.judged.inputs import (
    checked,
    human_labels,
    items_by_system,
    judge_scores,
    samples_of_systems,
    sampling_probabilities,
)
from servers.evaluation.results import SavePathParam
from ultra_base.errors import InputError
from ultra_kit.factory import __version__, tool_hints
from ultra_kit.files import atomic_write_json, result_path
from ultra_kit.limits.caps import capped
from ultra_kit.paths.output_root import check_save_path

AlphaParam = Annotated[float, Field(description="1 - the intervals' confidence level", gt=0, lt=1)]


class PPIResult(TypedDict):
    """Per system and per pair: the PPI++ estimate beside classical PPI, judge-only and human-only means."""

    ppi_res: dict[str, dict[str, Any]]
    ppi_diff: dict[str, dict[str, Any]]
    result_path: str


@tool_hints(read_only=False, idempotent=True)
def ppi(
    *,
    judged: Annotated[
        dict[str, dict[str, float] | str] | None,
        Field(description="{system: {item_id: judge score}} or {system: judge result file}; overrides judged_files"),
    ] = None,
    human: Annotated[
        dict[str, dict[str, float]] | str | None,
        Field(description="{system: {item_id: human label}} or a labels file; overrides human_path"),
    ] = None,
    judged_items: Annotated[
        list[dict[str, Any]] | None, Field(description="a judge's items over several systems (with system_ls)")
    ] = None,
    system_ls: Annotated[list[str] | None, Field(description="each of judged_items' system")] = None,
    sampling_probs: Annotated[
        dict[str, float] | dict[str, dict[str, float]] | str | None,
        Field(
            description="active selection: {item_id: p} or {system: {item_id: p}}, the probability each item "
            "was labelled with, or a file (JSON, or ultra annotate's labels.sqlite)"
        ),
    ] = None,  # fmt: skip
    judged_files: Annotated[dict[str, str], Field(description="{system: an answer judge's result JSON}")],
    human_path: Annotated[str, Field(description="human labels: JSONL rows {system, item_id, label}")],
    judge_metric: Annotated[str, Field(description="the judge file's metric read as the score ('' = its only one)")],
    alpha: AlphaParam,
    save_path: SavePathParam,
) -> PPIResult:
    """Human-scale means from many judge scores and a few human labels: prediction-powered inference.

    Per system, with labels y and judge scores f on the n labelled items and f on the N other judged items:
    PPI++ (Angelopoulos, Duchi, Zrnic 2023) estimate = lambda * mean(f_unlabelled) + mean(y - lambda * f_labelled),
    lambda = clip(cov(y, f) / ((1 + n/N) var(f)), 0, 1) minimising the variance; beside it classical PPI
    (lambda = 1; Angelopoulos et al. 2023), the judge-only mean and the human-only mean, each with its normal
    interval at alpha, and effective_n = n * var(human-only) / var(PPI++). Per pair of systems: the same on
    the per-item differences (A - B), with its z-test p-value. Judge scores: judged, or judged_items (a judge's
    items) with system_ls, or judged_files. Fewer than 10 labels per system, or labels of
    ids never judged, are refused; labelled items whose judgment failed are left out and counted; a constant
    judge falls back to the human-only mean. With sampling_probs (items labelled with known probabilities pi, as
    ultra annotate's active selection records them; a labels.sqlite given as human brings its own), the active
    inference estimate (Zrnic & Candes 2024): mean over all N items of lambda f + (y - lambda f) xi / pi, lambda
    power-tuned, reported as lambda.
    """
    check_save_path(save_path, "ppi", ".json")
    source = judged if judged is not None else judged_files
    if not source and judged_items is None:
        raise InputError("give judged ({system: {item_id: score}}), judged_items with system_ls (a judge's items), "
                         "or judged_files ({system: judge result file})")  # fmt: skip
    labels_source = human if human is not None else human_path
    if not labels_source:
        raise InputError("give human ({system: {item_id: label}}) or human_path (a labels file)")
    if judged is None and judged_items is not None:
        source, scores = {}, items_by_system(judged_items, system_ls, judge_metric)
    else:
        scores = judge_scores(dict(source), judge_metric)
    labels = human_labels(labels_source)
    dropped = checked(scores, labels)
    if sampling_probs is None and isinstance(labels_source, str) and labels_source.endswith(".sqlite"):
        sampling_probs = labels_source  # an active labelling's store carries its probabilities
    probs = sampling_probabilities(sampling_probs, list(scores)) if sampling_probs is not None else None
    per_system = system_estimates(scores, labels, alpha, probs or None)
    for system, result in per_system.items():
        result["labels_without_judgment"] = len(dropped[system])
        result["judge_failed"] = len(scores[system].failed)
    pairs = pair_estimates(scores, labels, alpha, probs or None)
    settings = {"alpha": alpha, "judge_metric": judge_metric or None,
                "judged_files": {s: v for s, v in source.items() if isinstance(v, str)},
                "human_path": labels_source if isinstance(labels_source, str) else None,
                "active": probs is not None and bool(probs)}  # fmt: skip
    document = {"tool": "ppi", "ppi_res": per_system, "ppi_diff": pairs, "settings": settings,
                "versions": {"ultra-eval": __version__}}  # fmt: skip
    path = atomic_write_json(result_path(save_path, "ppi"), document)
    return {"ppi_res": per_system, "ppi_diff": pairs, "result_path": str(path)}


class CompareJudgedResult(TypedDict):
    """Per pair "A - B": the difference, the test with and without the judge's noise, and the flag."""

    comparisons: dict[str, dict[str, Any]]
    result_path: str


@tool_hints(read_only=False, idempotent=True)
def compare_judged(
    *,
    samples: Annotated[
        dict[str, dict[str, list[float]] | list[str] | str] | str | None,
        Field(
            description="{system: {item_id: [k judge scores]}}, or {system: judge result file(s)}: a file of a "
            "judge run with judge_llm.samples k (its items' sample_values), or one file per judging pass; or "
            "ultra annotate's labels.sqlite (each item's annotators' labels); overrides sample_files"
        ),
    ] = None,
    judged_items: Annotated[
        list[dict[str, Any]] | None,
        Field(
            description="a judge's items over several systems (with system_ls); with judge_llm.samples k each "
            "item's sample_values are its k samples"
        ),
    ] = None,
    system_ls: Annotated[list[str] | None, Field(description="each of judged_items' system")] = None,
    sample_files: Annotated[
        dict[str, list[str] | str],
        Field(
            description="{system: a judge result file of a run with judge_llm.samples k, or [files, one judging "
            "pass each]}"
        ),
    ],  # fmt: skip
    judge_metric: Annotated[str, Field(description="the judge file's metric read as the score ('' = its only one)")],
    n_resamples: Annotated[int, Field(description="bootstrap rounds", ge=100)],
    seed: Annotated[int, Field(description="random seed: the same inputs and seed give the same result", ge=0)],
    alpha: AlphaParam,
    save_path: SavePathParam,
) -> CompareJudgedResult:
    """Compare systems whose items carry k judge samples each, counting the judge's own noise.

    Samples: samples, or judged_items (a judge's items, with system_ls), or sample_files; a judge run with
    judge_llm.samples k records each item's k samples (sample_values), which are read as they are.
    Per pair (A - B) over the items both have: a hierarchical bootstrap (resample the queries, then each
    query's judge samples) gives the percentile interval and a two-sided p-value of mean(A) - mean(B)
    with the judge's noise; beside it the same bootstrap over queries only, taking each item's mean as exact.
    `significant_only_if_judge_exact` flags a difference significant at alpha only when the judge is exact.
    """
    check_save_path(save_path, "compare_judged", ".json")
    capped(n_resamples, "n_resamples", server="evaluation", name="n_resamples", minimum=100)
    per_system = samples_of_systems(samples, judged_items, system_ls, sample_files, judge_metric)
    comparisons = compare_systems(per_system, n_resamples=n_resamples, seed=seed, alpha=alpha)
    settings = {"alpha": alpha, "n_resamples": n_resamples, "seed": seed, "judge_metric": judge_metric or None}
    path = atomic_write_json(
        result_path(save_path, "compare_judged"),
        {
            "tool": "compare_judged",
            "comparisons": comparisons,
            "settings": settings,
            "versions": {"ultra-eval": __version__},
        },
    )
    return {"comparisons": comparisons, "result_path": str(path)}


TOOLS = [ppi, compare_judged]
