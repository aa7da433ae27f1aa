"""The registry of MT-RAG metrics (``METRICS``): each metric of ``evaluate_mtrag`` is declared once,
here (name, description, extra, the function computing its columns); the tool's field description,
its errors, the docs' table and the directions are built from it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from servers.evaluation.mtrag.columns import (
    Columns,
    Records,
    bert_k_prec,
    bertscore_p,
    bertscore_r,
    extractiveness_column,
    length,
    rb_agg_column,
    recall,
    rouge_l_column,
)
from ultra_base.errors import InputError
from ultra_base.registry import Registry, Valued, fail


@dataclass(frozen=True)
class MtragMetric(Valued):
    """An MT-RAG metric, declared once: the registry entry the tool, errors and docs are built from.

    ``compute`` returns the metric's result columns (it may read earlier columns: ``needs``);
    ``per_passage``: its own column holds a list per record, averaged only through its ``_max``.
    """

    name: str
    description: str
    compute: Callable[[Records, Columns], Columns]
    extra: str | None = None
    needs: tuple[str, ...] = ()
    per_passage: bool = False
    reads: tuple[str, ...] = ()  # settings it reads, recorded with the result
    kind: str = "continuous"  # what its values are (ultra_base.registry.KINDS)
    better: str = "higher"  # gates, compare and ultra sweep read it (SPEC.metric_directions)


_BERT = ("bertscore_model", "bertscore_layer")


def _needs_come_first() -> Callable[[MtragMetric], None]:
    """A metric's needs come before it, so computing in registry order has them ready."""
    seen: list[str] = []

    def check(metric: MtragMetric) -> None:
        if not set(metric.needs) <= set(seen):
            raise fail("MT-RAG metric", metric.name, "needs", f"names {list(metric.needs)}, which must come before it")
        seen.append(metric.name)

    return check


METRICS: Registry[MtragMetric] = Registry(
    "MT-RAG metric",
    (
        MtragMetric("Recall", "share of the target's SQuAD-normalised tokens found in the prediction", recall),
        MtragMetric("RougeL_stemFalse", "rouge-score rougeL F-measure, no stemmer, vs the target", rouge_l_column),
        MtragMetric("BertscoreP", "BERTScore precision vs the target", bertscore_p, "bertscore", reads=_BERT),
        MtragMetric("BertscoreR", "BERTScore recall vs the target", bertscore_r, "bertscore", reads=_BERT),
        MtragMetric(
            "BertKPrec", "BERTScore precision vs each passage; BertKPrec_max", bert_k_prec, "bertscore",
            per_passage=True, reads=_BERT,
        ),
        MtragMetric(
            "Extractiveness_RougeL", "1 if a cleaned passage occurs in the prediction, else its rougeL; _max",
            extractiveness_column, per_passage=True,
        ),
        MtragMetric("Length", "characters of the prediction", length),
        MtragMetric(
            "RB_agg", "harmonic mean of (BertscoreR+1)/2, RougeL, (BertKPrec_max+1)/2; RB_agg_idk with IDK inputs",
            rb_agg_column, "bertscore", needs=("RougeL_stemFalse", "BertscoreR", "BertKPrec"),
        ),
    ),
    choices={"extra": (None, "bertscore"), "reads": _BERT, "kind": ("binary", "graded", "continuous")},
    check=_needs_come_first(),
)  # fmt: skip
MTRAG_METRICS = METRICS.names


def higher_is_better() -> dict[str, bool]:
    """``{metric: higher_is_better}`` of every MT-RAG metric (``SPEC.metric_directions``)."""
    return METRICS.directions()


def describe_names() -> str:
    """The metric names, with the extra each needs (for the tool's field description)."""
    return METRICS.describe(lambda m: m.name + (f" (extra {m.extra})" if m.extra else ""))


def registry_markdown() -> str:
    """A Markdown table of the MT-RAG metrics of ``evaluate_mtrag``."""
    return METRICS.table(
        [
            ("name", lambda m: m.name),
            ("extra", lambda m: m.extra or "-"),
            ("needs", lambda m: ", ".join(m.needs) or "-"),
            ("description", lambda m: m.description),
        ]
    )


def settings_read(names: Sequence[str]) -> list[str]:
    """The settings that the chosen metrics read."""
    return list(dict.fromkeys(setting for name in names for setting in METRICS[name].reads))


def resolve_mtrag_metrics(names: Sequence[str]) -> list[str]:
    """Canonical MT-RAG metric names (case-insensitive), with what they need added, in registry order."""
    by_key = {name.lower(): name for name in METRICS}
    chosen: list[str] = []
    for name in [names] if isinstance(names, str) else names:
        canonical = by_key.get(str(name).strip().lower())
        if canonical is None:
            raise InputError(f"unknown MT-RAG metric '{name}'; known: {describe_names()}")
        chosen.extend(n for n in (*METRICS[canonical].needs, canonical) if n not in chosen)
    if not chosen:
        raise InputError(f"mtrag_metrics is empty; choose from: {describe_names()}")
    return [name for name in METRICS if name in chosen]
