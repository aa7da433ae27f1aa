"""Evaluating many MT-RAG records (``evaluate_mtrag_records``): inputs checked, the chosen metrics
computed in registry order, their means."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from servers.evaluation.mtrag import metrics as registry
from servers.evaluation.mtrag.columns import Columns, Records
from servers.evaluation.mtrag.scores import answerability_label, idk_value, texts_of
from servers.evaluation.results import EvaluateResult, item_ids, save_result
from ultra_base.errors import InputError
from ultra_kit.answered import answered_items

Progress = Callable[[float, float | None, str | None], None]


def run_evaluate_mtrag(
    pred_ls: Sequence[str | None],
    gt_ls: Sequence[object],
    *,
    ctx_ls: Sequence[object] | None,
    answerability_ls: Sequence[object] | None,
    idk_ls: Sequence[object] | None,
    id_ls: list[Any] | None,
    mtrag_metrics: Sequence[str],
    bertscore_model: str,
    bertscore_layer: int,
    save_path: str,
    progress: Progress | None,
) -> EvaluateResult:
    """The ``evaluate_mtrag`` tool: the answered records scored (``evaluate_mtrag_records``), the settings recorded
    beside them, the result file written. A record whose prediction is None (``target.ask``: the system failed)
    is left out and listed in ``settings.failed_items``."""
    answers, kept, failed = answered_items(
        pred_ls, gt_ls=gt_ls, ctx_ls=ctx_ls, answerability_ls=answerability_ls, idk_ls=idk_ls, id_ls=id_ls
    )
    eval_res = evaluate_mtrag_records(
        answers,
        kept["gt_ls"],
        kept["ctx_ls"],
        answerability_ls=kept["answerability_ls"],
        idk_ls=kept["idk_ls"],
        mtrag_metrics=mtrag_metrics,
        bertscore_model=bertscore_model,
        bertscore_layer=bertscore_layer,
        progress=progress,
    )
    names = registry.resolve_mtrag_metrics(mtrag_metrics)
    settings: dict[str, Any] = {
        "mtrag_metrics": names,
        "idk_conditioning": kept["idk_ls"] is not None,
        "n_records": len(answers),
        "failed_items": failed,  # ids of the records the system did not answer (pred_ls None): not scored
        "higher_is_better": {name: registry.METRICS[name].higher_is_better for name in names},  # compare's
    }
    given = {"bertscore_model": bertscore_model, "bertscore_layer": bertscore_layer}
    settings.update({name: given[name] for name in registry.settings_read(names)})
    if "bertscore_model" in settings:
        settings["bertscore_rescaled"] = False
    ids = item_ids(kept["id_ls"], len(answers))
    path = save_result("evaluate_mtrag", save_path, {"id_ls": ids, **eval_res}, settings)
    return {"eval_res": eval_res, "settings": settings, "result_path": path}


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _check_lengths(n: int, **lists: Sequence | None) -> None:
    for name, values in lists.items():
        if values is None:
            continue
        if not isinstance(values, (list, tuple)):
            raise InputError(f"{name} must be a list with one entry per record")
        if len(values) != n:
            raise InputError(f"pred_ls has {n} records but {name} has {len(values)}; they must have equal length")


def evaluate_mtrag_records(
    pred_ls: Sequence[str],
    gt_ls: Sequence[object],
    ctx_ls: Sequence[object] | None = None,
    *,
    answerability_ls: Sequence[object] | None = None,
    idk_ls: Sequence[object] | None = None,
    mtrag_metrics: Sequence[str],
    bertscore_model: str,
    bertscore_layer: int,
    progress: Progress | None = None,
) -> dict[str, object]:
    """MT-RAG metrics per record plus ``avg_<metric>``; ``RB_agg_idk`` when idk (and answerability) are given."""
    if not isinstance(pred_ls, (list, tuple)) or not pred_ls:
        raise InputError("pred_ls must be a non-empty list of predictions")
    n = len(pred_ls)
    _check_lengths(n, gt_ls=gt_ls, ctx_ls=ctx_ls, answerability_ls=answerability_ls, idk_ls=idk_ls)
    if idk_ls is not None and answerability_ls is None:
        raise InputError("IDK conditioning needs answerability_ls as well as idk_ls")
    for index, prediction in enumerate(pred_ls):
        if not isinstance(prediction, str):
            raise InputError(f"pred_ls[{index}] is a {type(prediction).__name__}, expected a string")
    names = registry.resolve_mtrag_metrics(mtrag_metrics)
    contexts = [[] for _ in range(n)] if ctx_ls is None else ctx_ls
    passages = [texts_of(v, "ctx_ls", i, allow_empty=True) for i, v in enumerate(contexts)]
    labels = None if answerability_ls is None else [answerability_label(v, i) for i, v in enumerate(answerability_ls)]
    records = Records(
        predictions=pred_ls,
        targets=[texts_of(value, "gt_ls", i, allow_empty=False) for i, value in enumerate(gt_ls)],
        passages=passages,
        labels=labels,
        idks=None if idk_ls is None else [idk_value(v, i) for i, v in enumerate(idk_ls)],
        chosen=tuple(names),
        bertscore_model=bertscore_model,
        bertscore_layer=bertscore_layer,
    )
    result: Columns = {}
    for done, name in enumerate(names):
        result.update(registry.METRICS[name].compute(records, result))
        if progress is not None:
            progress(done + 1, len(names), name)
    own_lists = {name for name in names if registry.METRICS[name].per_passage}
    averages = {f"avg_{name}": _mean(values) for name, values in result.items() if name not in own_lists}
    return {**result, **averages, "n_records": n}
