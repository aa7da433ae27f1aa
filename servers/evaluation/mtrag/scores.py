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
from collections.abc import Sequence

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
