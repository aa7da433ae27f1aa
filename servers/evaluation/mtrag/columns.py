"""What one call of ``evaluate_mtrag`` computes over: the checked records (``Records``, with one
BERTScore pass shared by the BERTScore metrics) and each metric's columns (``Columns``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from servers.evaluation.mtrag.scores import (
    extractiveness,
    idk_condition,
    max_over,
    rb_agg,
    rouge_l_nostem,
    token_recall,
)

Columns = dict[str, list]


@dataclass(frozen=True)
class Records:
    """Checked inputs of one call, shared by the metric functions."""

    predictions: Sequence[str]
    targets: list[list[str]]
    passages: list[list[str]]
    labels: list[str] | None
    idks: list[float] | None
    chosen: tuple[str, ...]
    bertscore_model: str
    bertscore_layer: int

    def over_targets(self, score: Callable[[str, str], float]) -> list[float]:
        """``score(prediction, target)``, the maximum over each record's targets."""
        return [max(score(p, t) for t in ts) for p, ts in zip(self.predictions, self.targets, strict=False)]

    @cached_property
    def bert(self) -> Columns:
        """BERTScore P and R (max over targets) and, if chosen, precision per passage: one scorer call."""
        from servers.evaluation.answers.bertscore import bert_scorer

        scorer = bert_scorer(self.bertscore_model, int(self.bertscore_layer))
        records = list(enumerate(self.predictions))
        pairs_t = [(i, p, t) for i, p in records for t in self.targets[i]]
        pairs_c = [(i, p, c) for i, p in records for c in self.passages[i]] if "BertKPrec" in self.chosen else []
        pairs = pairs_t + pairs_c
        precision, recall = scorer.score([p for _, p, _ in pairs], [r for _, _, r in pairs])
        best_p: list[float | None] = [None] * len(records)
        best_r: list[float | None] = [None] * len(records)
        for (i, _, _), p, r in zip(pairs_t, precision, recall, strict=False):
            best_p[i] = p if best_p[i] is None else max(best_p[i], p)
            best_r[i] = r if best_r[i] is None else max(best_r[i], r)
        kprec: list[list[float]] = [[] for _ in records]
        for (i, _, _), p in zip(pairs_c, precision[len(pairs_t) :], strict=False):
            kprec[i].append(p)
        return {"BertscoreP": best_p, "BertscoreR": best_r, "BertKPrec": kprec}


def recall(records: Records, result: Columns) -> Columns:
    return {"Recall": records.over_targets(token_recall)}


def rouge_l_column(records: Records, result: Columns) -> Columns:
    return {"RougeL_stemFalse": records.over_targets(lambda p, t: rouge_l_nostem(t, p))}


def bertscore_p(records: Records, result: Columns) -> Columns:
    return {"BertscoreP": records.bert["BertscoreP"]}


def bertscore_r(records: Records, result: Columns) -> Columns:
    return {"BertscoreR": records.bert["BertscoreR"]}


def bert_k_prec(records: Records, result: Columns) -> Columns:
    kprec = records.bert["BertKPrec"]
    return {"BertKPrec": kprec, "BertKPrec_max": [max_over(values) for values in kprec]}


def extractiveness_column(records: Records, result: Columns) -> Columns:
    pairs = zip(records.predictions, records.passages, strict=False)
    per_passage = [[extractiveness(p, c) for c in cs] for p, cs in pairs]
    return {"Extractiveness_RougeL": per_passage, "Extractiveness_RougeL_max": [max_over(v) for v in per_passage]}


def length(records: Records, result: Columns) -> Columns:
    return {"Length": [len(p) for p in records.predictions]}


def rb_agg_column(records: Records, result: Columns) -> Columns:
    terms = zip(result["BertscoreR"], result["RougeL_stemFalse"], result["BertKPrec_max"], strict=False)
    values = [rb_agg(r, rl, k) for r, rl, k in terms]
    if records.labels is None or records.idks is None:
        return {"RB_agg": values}
    conditioned = [idk_condition(v, a, i) for v, a, i in zip(values, records.labels, records.idks, strict=False)]
    return {"RB_agg": values, "RB_agg_idk": conditioned}
