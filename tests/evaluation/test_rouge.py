"""ROUGE and LCS: identical to the rouge-score package and to the textbook dynamic programme."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from servers.evaluation.answers.lcs import lcs_length
from servers.evaluation.answers.rouge import RougeScorer, rouge_tokenize, shared_stemmer

CONFORMANCE = Path(__file__).resolve().parents[1] / "data" / "mtrag" / "conformance_477.jsonl"
TYPES = ["rouge1", "rouge2", "rougeL"]


def dp_lcs(a: list, b: list) -> int:
    """The classic O(mn) table, as rouge-score's ``_lcs_table``."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


@given(st.lists(st.integers(0, 5), max_size=80), st.lists(st.integers(0, 5), max_size=80))
@settings(max_examples=300, deadline=None)
def test_bit_parallel_lcs_equals_dynamic_programme(a: list[int], b: list[int]) -> None:
    assert lcs_length(a, b) == dp_lcs(a, b)


def test_lcs_on_sequences_longer_than_a_machine_word() -> None:
    rng = random.Random(7)
    for _ in range(20):
        a = rng.choices("abcdefgh", k=rng.randint(60, 300))
        b = rng.choices("abcdefgh", k=rng.randint(60, 300))
        assert lcs_length(a, b) == dp_lcs(a, b)


def assert_same_as_rouge_score(pairs: list[tuple[str, str]], use_stemmer: bool) -> None:
    reference = rouge_scorer.RougeScorer(TYPES, use_stemmer=use_stemmer)
    ours = RougeScorer(use_stemmer=use_stemmer)
    for target, prediction in pairs:
        expected = reference.score(target, prediction)
        got = ours.score(target, prediction, TYPES)
        for rouge_type in TYPES:
            assert got[rouge_type] == pytest.approx(expected[rouge_type].fmeasure, abs=1e-12, rel=0), (
                rouge_type,
                target,
                prediction,
            )


WORDS = ["the", "cat", "sat", "on", "mat", "running", "runs", "ran", "Dogs", "dog's", "A", "an", "b", "42", "x_y",
         "héllo", "KELVIN", "\u212a", "İstanbul", "connection", "connected", ",", ".", "--", "generously"]  # fmt: skip


@pytest.mark.parametrize("use_stemmer", [True, False])
def test_rouge_equals_rouge_score_on_random_texts(use_stemmer: bool) -> None:
    rng = random.Random(2024)
    pairs = [
        (" ".join(rng.choices(WORDS, k=rng.randint(0, 40))), " ".join(rng.choices(WORDS, k=rng.randint(0, 40))))
        for _ in range(1500)
    ]
    assert_same_as_rouge_score(pairs, use_stemmer)


@given(st.text(max_size=120), st.text(max_size=120))
@settings(max_examples=200, deadline=None)
def test_rouge_equals_rouge_score_on_arbitrary_unicode(target: str, prediction: str) -> None:
    assert_same_as_rouge_score([(target, prediction)], use_stemmer=True)


@pytest.mark.parametrize("use_stemmer", [True, False])
def test_rouge_equals_rouge_score_on_real_mtrag_answers(use_stemmer: bool) -> None:
    records = [json.loads(line) for line in CONFORMANCE.read_text(encoding="utf-8").splitlines()]
    # Half the records each (rouge-score's own LCS table is slow on long texts); together all 477.
    start = 0 if use_stemmer else 1
    pairs = [(r["target"], r["prediction"]) for r in records[start::2]]
    # Also cross pairs (different tasks), where the LCS is short and scattered.
    pairs += [(records[i]["target"], records[(i * 7 + 3) % len(records)]["prediction"]) for i in range(start, 477, 12)]
    assert_same_as_rouge_score(pairs, use_stemmer)


def test_tokenizer_matches_rouge_score_tokenizer() -> None:
    from rouge_score import tokenizers

    default = tokenizers.DefaultTokenizer(use_stemmer=True)
    text = "The Runners were RUNNING quickly -- 3 dogs' tails, généralement!"
    assert rouge_tokenize(text, shared_stemmer()) == default.tokenize(text)


def test_unknown_rouge_type_is_rejected() -> None:
    with pytest.raises(ValueError, match="rougeL"):
        RougeScorer().score("a b", "a b", ["rougeX"])
