"""SQuAD v2 no-answer semantics of ``evaluate``, checked against the official evaluation formula.

``official_*`` below restate SQuAD v2's evaluate-v2.0.py (normalize_answer, compute_exact,
compute_f1, and its "no gold left means the gold ''" rule) for this test only.
"""

from __future__ import annotations

import collections
import json
import re
import string
from pathlib import Path

import pytest

from servers.benchmark.formats import read_records
from tests.evaluation.helpers import score_answers

DATA = Path(__file__).resolve().parents[1] / "data" / "squad_v2"


def official_normalize(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def official_tokens(text: str) -> list[str]:
    return official_normalize(text).split() if text else []


def official_exact(gold: str, prediction: str) -> int:
    return int(official_normalize(gold) == official_normalize(prediction))


def official_f1(gold: str, prediction: str) -> float:
    gold_tokens, pred_tokens = official_tokens(gold), official_tokens(prediction)
    if not gold_tokens or not pred_tokens:
        return float(gold_tokens == pred_tokens)  # no answer: right only if the prediction is empty too
    shared = sum((collections.Counter(gold_tokens) & collections.Counter(pred_tokens)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(pred_tokens), shared / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def official_scores(answers: list[str], prediction: str) -> tuple[float, float]:
    golds = [text for text in answers if official_normalize(text)] or [""]
    return max(official_exact(g, prediction) for g in golds), max(official_f1(g, prediction) for g in golds)


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


@pytest.fixture(scope="module")
def sample() -> tuple[list[dict], dict[str, str]]:
    records = read_records(str(DATA / "dev_sample.json"), "squad")
    predictions = json.loads((DATA / "predictions.json").read_text(encoding="utf-8"))
    return records, predictions


def test_em_and_f1_equal_the_official_squad_v2_formula(sample) -> None:
    records, predictions = sample
    preds = [predictions[r["id"]] for r in records]
    golds = [r["answers"] for r in records]
    result = score_answers(preds, golds, ["em", "f1"])
    official = [official_scores(g, p) for g, p in zip(golds, preds, strict=True)]
    has_answer = [not r["is_impossible"] for r in records]
    assert [bool(g) for g in golds] == has_answer and 0 < sum(has_answer) < len(records)
    assert result["em"] == [e for e, _ in official]
    assert result["f1"] == pytest.approx([f for _, f in official], abs=1e-12, rel=0)
    for key, index in (("em", 0), ("f1", 1)):
        values = [scores[index] for scores in official]
        assert result[f"avg_{key}"] == pytest.approx(mean(values), abs=1e-12)
        assert result[f"avg_{key}_HasAns"] == pytest.approx(
            mean([v for v, h in zip(values, has_answer, strict=True) if h]), abs=1e-12
        )
        assert result[f"avg_{key}_NoAns"] == pytest.approx(
            mean([v for v, h in zip(values, has_answer, strict=True) if not h]), abs=1e-12
        )
    assert result["num_HasAns"] == 5 and result["num_NoAns"] == 4
    # The sample's hand-checked numbers: no-answer items lv-04 "" and hb-03 "A" (empty once
    # normalised) score 1, "The Atlantic." and "they do nothing" 0; hb-02 "" has an answer: 0.
    assert result["em"] == [0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    assert result["avg_em_NoAns"] == 0.5 and result["avg_em_HasAns"] == 0.2
    assert result["f1"][0] == pytest.approx(2 / 3)  # "loire river" against "loire"


@pytest.mark.parametrize("gold", [[], "", [""], ["", "  "], [[]], [[""], []]])
def test_empty_gold_means_no_answer(gold) -> None:
    result = score_answers(["", "Paris", "the"], [gold, gold, gold], ["em", "f1", "acc", "rouge-l", "length"])
    # Abstaining (an empty or article-only prediction) is right, any answer is wrong.
    for name in ("em", "f1", "acc", "rouge-l"):
        assert result[name] == [1.0, 0.0, 1.0]
    assert result["length"] == [0.0, 1.0, 1.0]
    assert "num_NoAns" not in result  # only one kind of item: no breakdown


def test_every_metric_scores_no_answer_items_by_abstention() -> None:
    names = ["em", "acc", "coverem", "stringem", "f1", "precision", "recall", "rouge-1", "rouge-2", "rouge-l"]
    result = score_answers(["Eiffel Tower", "", "Lyon"], [["the Eiffel Tower"], [], []], names)
    for name in names:
        assert result[name] == [1.0, 1.0, 0.0], name
        assert result[f"avg_{name}_HasAns"] == 1.0 and result[f"avg_{name}_NoAns"] == 0.5
    assert result["num_HasAns"] == 1 and result["num_NoAns"] == 2


def test_empty_alias_beside_a_real_one_is_dropped() -> None:
    result = score_answers(["", "Paris"], [["", "Paris"], ["", "Paris"]], ["em"])
    assert result["em"] == [0.0, 1.0]  # the item has an answer; an empty prediction misses it
    assert "num_NoAns" not in result
