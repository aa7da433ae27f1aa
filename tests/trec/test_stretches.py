"""A large run is ranked in stretches of whole queries, one per thread: the results must not change."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.trec.test_properties import compare_with_pytrec, random_case
from ultra_trec import ranking
from ultra_trec.engine import evaluate
from ultra_trec.ranking import stretches
from ultra_trec.table import block_starts

NAMES = ["all_trec", "hits@3", "Judged@3", "mrr@2", "relstring@4"]


@pytest.fixture
def many_stretches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut every run into up to 4 stretches, however small, on any number of cores."""
    monkeypatch.setattr(ranking, "STRETCH_MIN_ROWS", 1)
    monkeypatch.setattr(ranking, "MAX_STRETCHES", 4)


def shuffled(run: dict, seed: int) -> dict:
    """The same run with its (qid, docid) entries interleaved across queries."""
    rng = np.random.default_rng(seed)
    entries = [(qid, docid, score) for qid, docs in run.items() for docid, score in docs.items()]
    shuffled_run: dict[str, dict[str, float]] = {}
    for i in rng.permutation(len(entries)):
        qid, docid, score = entries[i]
        shuffled_run.setdefault(qid, {})[docid] = score
    return shuffled_run


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    tie_mode=st.sampled_from(["integers", "all-equal", "one-decimal"]),
    relevance_level=st.sampled_from([0, 1, 2]),
    max_depth=st.sampled_from([None, 1, 3]),
)
def test_stretches_give_the_same_values(seed: int, tie_mode: str, relevance_level: int, max_depth) -> None:
    qrels, run = random_case(seed, tie_mode)
    expected = evaluate(qrels, run, NAMES, relevance_level=relevance_level, max_depth=max_depth)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranking, "STRETCH_MIN_ROWS", 1)
        patch.setattr(ranking, "MAX_STRETCHES", 4)
        for variant in (run, shuffled(run, seed)):
            got = evaluate(qrels, variant, NAMES, relevance_level=relevance_level, max_depth=max_depth)
            assert got.per_query == expected.per_query
            assert got.counts == expected.counts


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), tie_mode=st.sampled_from(["integers", "all-equal", "one-decimal"]))
def test_stretches_match_pytrec_eval(seed: int, tie_mode: str) -> None:
    qrels, run = random_case(seed, tie_mode)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranking, "STRETCH_MIN_ROWS", 1)
        patch.setattr(ranking, "MAX_STRETCHES", 4)
        compare_with_pytrec(qrels, run, relevance_level=1)


def test_stretches_cut_only_between_queries() -> None:
    query = np.repeat(np.array([4, 1, 7, 2, 9, 3], dtype=np.int32), [5, 1, 9, 2, 2, 11])
    starts = block_starts(query)
    assert starts.tolist() == [0, 5, 6, 15, 17, 19]
    for count in range(1, 9):
        bounds = stretches(starts, query.size, count)
        assert bounds[0][0] == 0 and bounds[-1][1] == query.size
        assert all(end == start for (_, end), (start, _) in zip(bounds, bounds[1:], strict=False))
        assert all(hi > lo for lo, hi in bounds)
        for lo, _ in bounds[1:]:
            assert query[lo] != query[lo - 1]  # never inside a query's rows
        assert len(bounds) <= min(count, 6)
    assert stretches(starts, query.size, 3) == [(0, 15), (15, 30)]  # the first query starts after rows 10 and 20
    assert stretches(block_starts(np.zeros(10, dtype=np.int32)), 10, 4) == [(0, 10)]  # one query: one stretch
    assert block_starts(np.zeros(0, dtype=np.int32)).size == 0


def test_a_run_is_cut_into_threads(many_stretches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """With small stretches allowed, evaluate really ranks in several stretches."""
    seen: list[tuple[int, int]] = []
    original = ranking.stretches

    def recording(starts: np.ndarray, n: int, count: int) -> list[tuple[int, int]]:
        bounds = original(starts, n, count)
        seen.extend(bounds)
        return bounds

    monkeypatch.setattr(ranking, "stretches", recording)
    qrels = {f"q{i}": {f"d{j}": j % 3 for j in range(6)} for i in range(8)}
    run = {f"q{i}": {f"d{j}": float(j % 4) for j in range(10)} for i in range(8)}
    result = evaluate(qrels, run, ["map", "ndcg@5"])
    assert len(seen) == 4
    monkeypatch.setattr(ranking, "MAX_STRETCHES", 1)
    assert evaluate(qrels, run, ["map", "ndcg@5"]).per_query == result.per_query


def test_docids_at_takes_across_chunks_in_the_asked_order() -> None:
    import pyarrow as pa

    from ultra_trec.table import TrecTable

    words = [f"doc{i:03d}".encode() for i in range(40)]
    chunked = pa.chunked_array([words[:7], words[7:8], words[8:30], words[30:]], type=pa.binary())
    table = TrecTable("run", "t", ["q"], np.zeros(40, np.int32), chunked, np.zeros(40))
    rng = np.random.default_rng(3)
    for rows in (rng.integers(0, 40, 25), np.array([39, 0, 7, 7, 8, 29, 30]), np.zeros(0, np.int64)):
        assert table.docids_at(rows).to_pylist() == [words[i] for i in rows]
    single = TrecTable("run", "t", ["q"], np.zeros(40, np.int32), pa.chunked_array([words]), np.zeros(40))
    assert single.docids_at(np.array([5, 1])).to_pylist() == [words[5], words[1]]


def test_score_order_groups_queries_with_scores_descending() -> None:
    rng = np.random.default_rng(9)
    for size in (1, 2, 50, 5000):
        query = rng.integers(0, 7, size).astype(np.int32)
        scores = np.round(rng.normal(0, 1, size), 1)  # many ties
        scores[rng.integers(0, size, size // 10)] = np.inf
        order = ranking._score_order(query, scores)
        assert np.array_equal(np.sort(order), np.arange(size))  # a permutation
        q, s = query[order], scores[order]
        assert np.all(np.diff(q) >= 0)
        same = q[1:] == q[:-1]
        assert np.all(s[1:][same] <= s[:-1][same])
