"""QA answer metrics: definitions from METRICS.md, normalisations, nested golds, bad input."""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from pathlib import Path

import pytest
from rouge_score import rouge_scorer

from servers.evaluation.answers.metrics import METRICS, resolve_metrics
from servers.evaluation.answers.normalize import normalize_gold, squad_normalize, ultrarag_normalize
from tests.evaluation.helpers import score_answers
from ultra_base.errors import InputError

ANSWERS = Path(__file__).resolve().parents[2] / "data" / "answers" / "mtrag_gpt4o_answers.jsonl"


def squad_reference(text: str) -> str:
    """SQuAD v1.1's normalize_answer, verbatim in behaviour."""

    def remove_articles(t: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", t)

    def remove_punc(t: str) -> str:
        return "".join(ch for ch in t if ch not in set(string.punctuation))

    return " ".join(remove_articles(remove_punc(text.lower())).split())


def ultrarag_reference(text: str) -> str:
    """UltraRAG's normalize_text, step by step."""
    text = {"True": "yes", "False": "no"}.get(text, text).replace("_", " ").lower()
    exclude = set(string.punctuation + "\u2018\u2019\u00b4`")
    text = "".join(" " if ch in exclude else ch for ch in text)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split()).strip()


SAMPLES = [
    "The Eiffel Tower, in Paris!",
    "an apple a day",
    "It's the_end of `the` \u2018world\u2019",
    "True",
    "False",
    "  spaced   out\ttext\n",
    "Theatre and anthem",
    "U.S.A. -- 1,000 dollars",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_normalisations_match_their_references(text: str) -> None:
    assert squad_normalize(text) == squad_reference(text)
    assert ultrarag_normalize(text) == ultrarag_reference(text)


def test_normalisations_differ_where_documented() -> None:
    assert squad_normalize("U.S.A.") == "usa"
    assert ultrarag_normalize("U.S.A.") == "u s"  # the article "a" left alone by the dots is removed
    assert ultrarag_normalize("True") == "yes" and squad_normalize("True") == "true"


def test_gold_that_normalises_to_nothing_keeps_its_lowercased_text_for_substring_metrics() -> None:
    assert normalize_gold("A", squad_normalize) == "a"
    assert normalize_gold("The", squad_normalize) == "the"
    # EM, acc and F1 follow SQuAD v2's script (the gold "A" is the empty answer: tests/hostile/test_empty_golds.py);
    # acc never takes an emptied gold for a substring of every prediction.
    result = score_answers(["", "nothing here"], ["A", "A"], ["em", "acc", "stringem"])
    assert result["em"] == [1.0, 0.0]
    assert result["acc"] == [1.0, 0.0]
    assert result["stringem"] == [0.0, 0.0]  # "a" (the raw text) is not in either


def test_exact_match_and_accuracy() -> None:
    preds = ["The Eiffel Tower", "It is the Eiffel Tower in Paris", "", "eiffel"]
    golds = [["Eiffel Tower"], ["eiffel tower", "tour eiffel"], ["Eiffel Tower"], "Eiffel Tower"]
    result = score_answers(preds, golds, ["em", "acc"])
    assert result["em"] == [1.0, 0.0, 0.0, 0.0]
    assert result["acc"] == [1.0, 1.0, 0.0, 0.0]
    assert result["avg_em"] == 0.25 and result["avg_acc"] == 0.5


def test_coverem_needs_every_gold_token_in_any_order() -> None:
    result = score_answers(["tower eiffel big", "eiffel big"], ["Eiffel Tower", "Eiffel Tower"], ["coverem"])
    assert result["coverem"] == [1.0, 0.0]


def test_stringem_is_the_share_of_answer_sets_found() -> None:
    pred = "Paris and Lyon are French cities"
    nested = [[["Paris", "City of Light"], ["Lyon"], ["Marseille"]]]
    assert score_answers([pred], nested, ["stringem"])["stringem"] == [2 / 3]
    # A flat list: each gold is its own answer set.
    assert score_answers([pred], [["Paris", "Nice"]], ["stringem"])["stringem"] == [0.5]
    # A nested set matches through any of its aliases.
    assert score_answers(["the city of light"], [[["Paris", "City of Light"]]], ["stringem"])["stringem"] == [1.0]


def squad_f1(prediction: str, gold: str) -> tuple[float, float, float]:
    p, g = squad_reference(prediction).split(), squad_reference(gold).split()
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0.0, 0.0, 0.0
    precision, recall = same / len(p), same / len(g)
    return precision, recall, 2 * precision * recall / (precision + recall)


def test_token_f1_precision_recall_are_squad_and_max_over_golds() -> None:
    pred = "the cat sat on the mat with another cat"
    golds = ["a cat on a mat", "cat cat dog"]
    result = score_answers([pred], [golds], ["f1", "precision", "recall"])
    per_gold = [squad_f1(pred, g) for g in golds]
    assert result["precision"] == [max(x[0] for x in per_gold)]
    assert result["recall"] == [max(x[1] for x in per_gold)]
    assert result["f1"] == [max(x[2] for x in per_gold)]
    assert score_answers([""], ["cat"], ["f1"])["f1"] == [0.0]


def test_rouge_is_rouge_score_on_normalised_texts_max_over_golds() -> None:
    records = [json.loads(line) for line in ANSWERS.read_text(encoding="utf-8").splitlines()][:40]
    preds = [r["pred_answer"] for r in records]
    golds = [r["golden_answers"] + [r["question"]] for r in records]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    result = score_answers(preds, golds, ["rouge-1", "rouge-2", "rouge-l"])
    for i, (pred, gold_list) in enumerate(zip(preds, golds, strict=False)):
        scores = [scorer.score(squad_normalize(g), squad_normalize(pred)) for g in gold_list]
        for name, key in (("rouge-1", "rouge1"), ("rouge-2", "rouge2"), ("rouge-l", "rougeL")):
            assert result[name][i] == pytest.approx(max(s[key].fmeasure for s in scores), abs=1e-12, rel=0)


def test_rouge_without_stemmer_and_with_ultrarag_normalisation() -> None:
    preds, golds = ["Running_dogs ran home"], [["run dog's home"]]
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
    expected = scorer.score(ultrarag_normalize(golds[0][0]), ultrarag_normalize(preds[0]))["rouge1"].fmeasure
    got = score_answers(preds, golds, ["rouge-1"], normalize="ultrarag", rouge_stemmer=False)["rouge-1"]
    assert got == [expected]


def test_length_counts_words_of_the_raw_prediction() -> None:
    assert score_answers(["one two, three", ""], ["x", "y"], ["length"])["length"] == [3.0, 0.0]


def test_output_shape_is_ultrarag_per_item_lists_and_averages() -> None:
    result = score_answers(["a b", "c"], [["a b"], ["d"]], ["em", "f1"])
    assert set(result) == {"em", "f1", "avg_em", "avg_f1"}
    assert len(result["em"]) == 2 and result["avg_f1"] == sum(result["f1"]) / 2


def test_metric_names_are_case_insensitive_and_unknown_ones_listed() -> None:
    assert resolve_metrics(["EM", "Rouge-L", "em"]) == ["em", "rouge-l"]
    with pytest.raises(InputError, match="known metrics: em, acc"):
        resolve_metrics(["bleurt"])
    assert set(METRICS) >= {"em", "acc", "coverem", "stringem", "f1", "rouge-l", "bleu", "meteor", "length"}


@pytest.mark.parametrize(
    ("preds", "golds", "message"),
    [
        (["a", "b"], [["a"]], "equal length"),
        ([], [], "empty"),
        (["a", 3], [["a"], ["b"]], r"pred_ls\[1\]"),
        (["a"], [[3]], r"gt_ls\[0\]"),
        (["a"], [None], r"gt_ls\[0\]"),
        (["a"], [[["a"], 3]], r"gt_ls\[0\]: expected a string"),
        ("a", ["a"], "must be lists"),
    ],
)
def test_bad_input_is_an_input_error(preds, golds, message: str) -> None:
    with pytest.raises(InputError, match=message):
        score_answers(preds, golds, ["em"])


def test_unknown_normalisation_is_an_input_error() -> None:
    with pytest.raises(InputError, match="squad, ultrarag"):
        score_answers(["a"], ["a"], ["em"], normalize="flashrag")
