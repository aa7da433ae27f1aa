"""MT-RAG's algorithmic answer metrics (IBM mt-rag-benchmark, ``run_algorithmic.py``) and RB_agg.

Per record: a prediction, its targets (reference answers), its contexts (passages) and its
answerability. Each metric is declared once in ``METRICS`` (name, description, extra, the
function computing its columns); the per-pair definitions are the functions below, each as
MT-RAG computes it. With several targets a per-target metric is the maximum over targets (MT-RAG
has one target per record and its RB_agg reads the first). ``idk_condition`` applies MT-RAG's
IDK conditioning.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from servers.evaluation.answers.normalize import squad_normalize
from servers.evaluation.answers.rouge import RougeScorer, rouge_l
from ultra_base.errors import InputError

ANSWERABILITY = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "CONVERSATIONAL")
IDK_VALUES = (0, 0.5, 1)
_NON_WORD = re.compile(r"[^\w\s]")
_ROUGE = RougeScorer(use_stemmer=False)


def token_recall(prediction: str, target: str) -> float:
    """MT-RAG ``Recall``: share of the target's normalised tokens (as a multiset) found in the prediction."""
    prediction_tokens = squad_normalize(prediction).split()
    target_tokens = squad_normalize(target).split()
    common = sum((Counter(prediction_tokens) & Counter(target_tokens)).values())
    if common == 0:
        return 0.0
    return common / len(target_tokens)


def rouge_l_nostem(target: str, prediction: str) -> float:
    """rouge-score rougeL F-measure without stemming: ``score(target, prediction)``."""
    return rouge_l(_ROUGE.text(target), _ROUGE.text(prediction))


def _extractive_clean(text: str) -> str:
    # MT-RAG's strip_newline_words; its clean_html (HTML unescape + tag stripping) has nothing
    # left to act on once '&', ';', '<' and '>' are gone, so it is not repeated here.
    return _NON_WORD.sub("", text.replace("\n", " ")).lower()


def extractiveness(prediction: str, passage: str) -> float:
    """MT-RAG ``Extractiveness_RougeL`` of a prediction against one passage."""
    text = _extractive_clean(prediction)
    source = _extractive_clean(passage)
    if source.replace(" ", "") in text.replace(" ", ""):
        return 1.0
    return rouge_l_nostem(source, text)


def rb_agg(bertscore_r: float, rouge_l_value: float, bertkprec_max: float | None) -> float:
    """MT-RAG ``RB_agg``: harmonic mean of (BertscoreR+1)/2, RougeL and (BertKPrec_max+1)/2.

    ``bertkprec_max`` None (no passages) gives the extractiveness term 0, hence 0. The harmonic
    mean is ``statistics.harmonic_mean``, which reproduces MT-RAG's stored values bit for bit and
    is 0 when any term is 0.
    """
    recall_term = (bertscore_r + 1) / 2
    extractive_term = 0.0 if bertkprec_max is None else (bertkprec_max + 1) / 2
    terms = [recall_term, rouge_l_value, extractive_term]
    if any(term <= 0 for term in terms):
        return 0.0
    return statistics.harmonic_mean(terms)


def answerability_label(value: object, index: int) -> str:
    """An answerability label (MT-RAG files hold a one-element list) checked and upper-cased."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    label = str(value).strip().upper() if isinstance(value, str) else None
    if label not in ANSWERABILITY:
        raise InputError(f"answerability_ls[{index}] is {value!r}; expected one of {', '.join(ANSWERABILITY)}")
    return label


def idk_value(value: object, index: int) -> float:
    """An IDK judgement: 1 = the answer says "I don't know", 0 = it does not, 0.5 = partly."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value not in IDK_VALUES:
        raise InputError(f"idk_ls[{index}] is {value!r}; expected 0, 0.5 or 1 (from the IDK judge)")
    return float(value)


def idk_condition(value: float, answerability: str, idk: float) -> float:
    """MT-RAG's IDK conditioning of a metric value.

    UNANSWERABLE or CONVERSATIONAL: 1 if the answer is an IDK (idk == 1), else 0.
    ANSWERABLE or PARTIAL: 0 if the answer is an IDK, else the metric itself.
    """
    if answerability in ("UNANSWERABLE", "CONVERSATIONAL"):
        return 1.0 if idk == 1 else 0.0
    return 0.0 if idk == 1 else value


def texts_of(value: object, what: str, index: int, *, allow_empty: bool) -> list[str]:
    """Strings from a string, a list of strings, or a list of ``{"text": ...}`` objects (MT-RAG's)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        texts = []
        for entry in value:
            if isinstance(entry, dict) and isinstance(entry.get("text"), str):
                texts.append(entry["text"])
            elif isinstance(entry, str):
                texts.append(entry)
            else:
                raise InputError(f"{what}[{index}]: expected strings or objects with a 'text' string, found {entry!r}")
        if texts or allow_empty:
            return texts
    if value is None and allow_empty:
        return []
    raise InputError(f"{what}[{index}]: expected a string or a non-empty list of strings, found {value!r}")


def max_over(values: Sequence[float]) -> float | None:
    """The largest value, None for an empty sequence (a record without passages)."""
    return max(values) if values else None


# --- the registry and evaluating many records ---------------------------------------------------

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


@dataclass(frozen=True)
class MtragMetric:
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
    higher_is_better: bool = True  # gates, compare and ultra sweep read it (SPEC.metric_directions)


_BERT = ("bertscore_model", "bertscore_layer")

METRICS: dict[str, MtragMetric] = {
    m.name: m
    for m in (
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
    )
}  # fmt: skip
MTRAG_METRICS = tuple(METRICS)


def higher_is_better() -> dict[str, bool]:
    """``{metric: higher_is_better}`` of every MT-RAG metric (``SPEC.metric_directions``)."""
    return {m.name: m.higher_is_better for m in METRICS.values()}


def _check_registry() -> None:
    """A metric's needs come before it, so computing in registry order has them ready."""
    for position, metric in enumerate(METRICS.values()):
        if not set(metric.needs) <= set(MTRAG_METRICS[:position]):
            raise AssertionError(f"{metric.name} needs {metric.needs}, which must come before it")


_check_registry()


def describe_names() -> str:
    """The metric names, with the extra each needs (for the tool's field description)."""
    return ", ".join(m.name + (f" (extra {m.extra})" if m.extra else "") for m in METRICS.values())


def registry_markdown() -> str:
    """A Markdown table of the MT-RAG metrics of ``evaluate_mtrag``."""
    rows = ["| name | extra | needs | description |", "|---|---|---|---|"]
    rows += [
        f"| {m.name} | {m.extra or '-'} | {', '.join(m.needs) or '-'} | {m.description} |" for m in METRICS.values()
    ]
    return "\n".join(rows) + "\n"


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
    progress: Callable[[float, float | None, str | None], None] | None = None,
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
    names = resolve_mtrag_metrics(mtrag_metrics)
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
        result.update(METRICS[name].compute(records, result))
        if progress is not None:
            progress(done + 1, len(names), name)
    own_lists = {name for name in names if METRICS[name].per_passage}
    averages = {f"avg_{name}": _mean(values) for name, values in result.items() if name not in own_lists}
    return {**result, **averages, "n_records": n}
