"""EM, acc and F1 when the gold normalises to nothing (issue 40, the scoring defect), through the real CLI
(``ultra call evaluation.evaluate``), against transcriptions of the two official scripts' logic.

The transcriptions below restate, in this file's own words, what SQuAD v2's ``evaluate-v2.0.py`` and MLQA's
``mlqa_evaluation_v1.py`` do; only the parts these cases reach (English and Spanish articles, Chinese
punctuation) are written out.

- SQuAD v2: normalise (lower-case, drop ASCII punctuation, drop the words a/an/the, collapse spaces); golds that
  normalise to nothing are dropped, and a question left with none has the single gold ``""``; EM is equality of
  the normalised texts; F1 is token F1, except that when either side has no tokens it is 1 if both have none.
- MLQA: normalise (lower-case, drop every Unicode punctuation character and ASCII punctuation, drop the
  language's articles, collapse spaces); every gold is kept; EM is equality; F1 is token F1, 0 when no token is
  shared (so an empty gold has F1 0 even against an empty prediction).

``acc`` (a normalised gold inside the normalised prediction) has no official script; it must agree with EM on
these cases, never take an emptied gold for a substring of every prediction.
"""

from __future__ import annotations

import json
import re
import string
import sys
import unicodedata
from collections import Counter

import pytest

from tests.support.background import Finished, spare_ultra

# --- SQuAD v2, transcribed ----------------------------------------------------------------------------------


def squad_v2_normal(text: str) -> str:
    kept = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", kept).split())


def squad_v2_golds(golds: list[str]) -> list[str]:
    return [g for g in golds if squad_v2_normal(g)] or [""]


def squad_v2_f1(gold: str, prediction: str) -> float:
    gold_tokens = squad_v2_normal(gold).split() if gold else []
    pred_tokens = squad_v2_normal(prediction).split() if prediction else []
    if not gold_tokens or not pred_tokens:
        return float(gold_tokens == pred_tokens)
    return token_f1(pred_tokens, gold_tokens)


def squad_v2(prediction: str, golds: list[str]) -> tuple[float, float]:
    kept = squad_v2_golds(golds)
    em = max(float(squad_v2_normal(g) == squad_v2_normal(prediction)) for g in kept)
    return em, max(squad_v2_f1(g, prediction) for g in kept)


# --- MLQA, transcribed --------------------------------------------------------------------------------------

UNICODE_PUNCTUATION = {chr(i) for i in range(sys.maxunicode + 1) if unicodedata.category(chr(i)).startswith("P")}
ARTICLES = {"en": r"\b(a|an|the)\b", "es": r"\b(un|una|unos|unas|el|la|los|las)\b", "zh": None}


def mlqa_normal(text: str, language: str) -> str:
    kept = "".join(ch for ch in text.lower() if ch not in UNICODE_PUNCTUATION | set(string.punctuation))
    if ARTICLES[language]:
        kept = re.sub(ARTICLES[language], " ", kept)
    return " ".join(kept.split())


def mlqa(prediction: str, golds: list[str], language: str) -> tuple[float, float]:
    pred = mlqa_normal(prediction, language)
    em = max(float(pred == mlqa_normal(g, language)) for g in golds)
    return em, max(token_f1(pred.split(), mlqa_normal(g, language).split()) for g in golds)


def token_f1(prediction: list[str], gold: list[str]) -> float:
    same = sum((Counter(prediction) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(prediction), same / len(gold)
    return 2 * precision * recall / (precision + recall)


# --- the cases ----------------------------------------------------------------------------------------------

IDENTICAL = {"en": ["A", "?", "The", "An"], "es": ["La", "El", "?"], "zh": ["。", "？"]}
OTHERS = {  # (prediction, golds): an emptied gold against other predictions, and mixed golds
    "en": [("", ["A"]), ("Paris", ["A"]), ("?", ["A"]), ("", ["A", "Paris"]), ("Paris", ["A", "Paris"])],
    "es": [("", ["La"]), ("Madrid", ["La"])],
    "zh": [("", ["。"]), ("北京", ["。"])],
}


def evaluate(cases: list[tuple[str, list[str]]], normalize: str, language: str) -> pytest.MarkDecorator:
    """``ultra call evaluation.evaluate`` of ``cases`` in the test's folder: a spare background run
    (tests/support/background.py); ``evaluated`` reads its scores."""
    return spare_ultra(lambda tmp_path: (
        "call", "evaluation.evaluate", f"pred_ls={json.dumps([p for p, _ in cases])}",
        f"gt_ls={json.dumps([g for _, g in cases])}", "metrics=[em, acc, f1]", f"normalize={normalize}",
        f"language={language}", "save_path=output/eval.json"))  # fmt: skip


def evaluated(finished: Finished) -> dict:
    done = finished.done
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["eval_res"]


def all_cases(language: str) -> list[tuple[str, list[str]]]:
    return [(text, [text]) for text in IDENTICAL[language]] + OTHERS[language]


@evaluate(all_cases("en"), "squad", "en")
def test_squad_normalisation_follows_squad_v2(background_run: Finished) -> None:
    language = "en"  # SQuAD's normalisation is English's; other languages follow MLQA's rules
    cases = all_cases(language)
    got = evaluated(background_run)
    expected = [squad_v2(prediction, golds) for prediction, golds in cases]
    assert list(zip(got["em"], got["f1"], strict=True)) == expected
    assert got["em"][: len(IDENTICAL[language])] == [1.0] * len(IDENTICAL[language])  # identical answers
    assert got["f1"][: len(IDENTICAL[language])] == [1.0] * len(IDENTICAL[language])
    assert got["acc"] == got["em"]


@pytest.mark.parametrize("language", [pytest.param(language, marks=evaluate(all_cases(language), "mlqa", language))
                                      for language in ("en", "es", "zh")])  # fmt: skip
def test_mlqa_normalisation_follows_mlqa(background_run: Finished, language: str) -> None:
    cases = all_cases(language)
    got = evaluated(background_run)
    expected = [mlqa(prediction, golds, language) for prediction, golds in cases]
    assert list(zip(got["em"], got["f1"], strict=True)) == expected
    assert got["em"][: len(IDENTICAL[language])] == [1.0] * len(IDENTICAL[language])  # identical answers
    assert got["acc"] == got["em"]


EMPTY_GOLDS = [("", [""]), ("The.", []), ("Paris", [""]), ("", ["A"]), ("Paris", ["A"])]


@evaluate(EMPTY_GOLDS, "squad", "en")
def test_squad_v2_empty_gold_rule(background_run: Finished) -> None:
    """An item with no gold (``""`` or ``[]``) scores 1 only for a prediction that normalises to nothing, and
    counts as NoAns; an item whose gold is "A" counts as HasAns (it has an answer text) but scores the same way."""
    cases = EMPTY_GOLDS
    got = evaluated(background_run)
    expected = [squad_v2(prediction, golds or [""]) for prediction, golds in cases]
    assert list(zip(got["em"], got["f1"], strict=True)) == expected == [(1, 1), (1, 1), (0, 0), (1, 1), (0, 0)]
    assert got["num_NoAns"] == 3 and got["num_HasAns"] == 2
