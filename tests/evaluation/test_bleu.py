"""BLEU: sacreBLEU's sentence BLEU (effective order) and corpus BLEU, divided by 100."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.evaluation.helpers import score_answers

sacrebleu = pytest.importorskip("sacrebleu")

ANSWERS = Path(__file__).resolve().parents[2] / "data" / "answers" / "mtrag_gpt4o_answers.jsonl"


def test_sentence_and_corpus_bleu_equal_sacrebleu_on_real_answers() -> None:
    records = [json.loads(line) for line in ANSWERS.read_text(encoding="utf-8").splitlines()][:60]
    preds = [r["pred_answer"] for r in records]
    # Items with one and with two references, so the corpus reference streams need padding.
    golds = [r["golden_answers"] + ([r["question"]] if i % 3 == 0 else []) for i, r in enumerate(records)]
    result = score_answers(preds, golds, ["bleu"])
    expected = [sacrebleu.sentence_bleu(p, g).score / 100 for p, g in zip(preds, golds, strict=False)]
    assert result["bleu"] == pytest.approx(expected, abs=1e-12, rel=0)
    streams = [[g[k] if k < len(g) else None for g in golds] for k in range(2)]
    assert result["corpus_bleu"] == pytest.approx(sacrebleu.corpus_bleu(preds, streams).score / 100, abs=1e-12)
    assert result["avg_bleu"] == pytest.approx(sum(expected) / len(expected), abs=1e-12)
    assert "tok:13a" in result["bleu_signature"] and "eff:yes" in result["bleu_signature"]


def test_identical_prediction_scores_one_and_disjoint_scores_zero() -> None:
    result = score_answers(["the cat sat on the mat", "zzz"], [["the cat sat on the mat"], ["the cat"]], ["bleu"])
    assert result["bleu"][0] == pytest.approx(1.0)
    assert result["bleu"][1] == 0.0


def test_signature_describes_the_reference_counts_of_all_items() -> None:
    # sacreBLEU's own signature names the reference count of the last item scored (here 1).
    result = score_answers(["a b c", "d e f", "g h"], [["a b c", "a c"], ["d e f", "x", "y"], ["g h"]], ["bleu"])
    assert "nrefs:1-3" in result["bleu_signature"] and "nrefs:1|" not in result["bleu_signature"]
    same = score_answers(["a b c", "d e f"], [["a b c", "a c"], ["d e f", "x"]], ["bleu"])
    assert "nrefs:2|" in same["bleu_signature"]


def test_no_answer_items_score_by_abstention_and_leave_the_corpus_score() -> None:
    preds, golds = ["the cat sat on the mat", "", "a dog"], [["the cat sat on the mat"], [], [""]]
    result = score_answers(preds, golds, ["bleu"])
    assert result["bleu"] == [pytest.approx(1.0), 1.0, 0.0]
    assert result["corpus_bleu"] == pytest.approx(sacrebleu.corpus_bleu(preds[:1], [golds[0]]).score / 100)
    assert result["num_NoAns"] == 2 and result["avg_bleu_NoAns"] == 0.5
    alone = score_answers([""], [[]], ["bleu"])
    assert alone["bleu"] == [1.0] and alone["corpus_bleu"] is None
