"""Measures trec_eval lacks: ranx's ``hits@k`` (a count) and ``RR@k`` (MS MARCO's reciprocal rank cut at k).

Checked by hand on a run with ties, and against definitions computed independently with
pytrec_eval: hits@k = P@k * k, and RR@k = recip_rank on the run cut to its top k per query.
"""

from __future__ import annotations

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.trec.test_properties import random_case
from ultra_trec.engine import evaluate

KS = (1, 2, 3, 5, 10)

# q1 ranks b (2.0), then the ties at 1.0 by docid descending: x, c, a; then d (0.5).
# q2 ranks h, g, e (all tied). q3 is judged but absent from the run.
QRELS = {"q1": {"a": 1, "b": 0, "c": 2, "d": 1}, "q2": {"e": 1}, "q3": {"f": 1}}
RUN = {"q1": {"a": 1.0, "b": 2.0, "c": 1.0, "x": 1.0, "d": 0.5}, "q2": {"g": 3.0, "h": 3.0, "e": 3.0}}


def test_hits_counts_relevant_documents_in_the_top_k_by_hand() -> None:
    result = evaluate(QRELS, RUN, ["hits@1", "hits@3", "hits@4", "hits@10", "hit_rate@4", "success@4"])
    per_query = result.per_query
    assert {m: per_query["q1"][m] for m in ("hits@1", "hits@3", "hits@4", "hits@10")} == {
        "hits@1": 0.0,
        "hits@3": 1.0,
        "hits@4": 2.0,
        "hits@10": 3.0,
    }
    assert [per_query["q2"][m] for m in ("hits@1", "hits@3", "hits@10")] == [0.0, 1.0, 1.0]
    assert all(value == 0 for name, value in per_query["q3"].items() if name != "num_rel")
    assert per_query["q1"]["success@4"] == 1.0  # hit_rate is success: 0/1, where hits counts 2
    assert "hit_rate@4" not in per_query["q1"]
    assert all(isinstance(per_query["q1"][m], float) for m in ("hits@1", "hits@10"))
    assert result.aggregate["hits@10"] == pytest.approx((3 + 1 + 0) / 3, abs=1e-15)
    level2 = evaluate(QRELS, RUN, ["hits@4", "hits@10"], relevance_level=2).per_query
    assert (level2["q1"]["hits@4"], level2["q1"]["hits@10"], level2["q2"]["hits@10"]) == (1.0, 1.0, 0.0)


def test_reciprocal_rank_at_k_by_hand() -> None:
    per_query = evaluate(QRELS, RUN, ["mrr", "mrr@1", "mrr@2", "RR@3", "recip_rank@10"]).per_query
    for qid in ("q1", "q2"):  # the first relevant document is at rank 3 in both
        assert per_query[qid]["mrr"] == pytest.approx(1 / 3, abs=1e-15)
        assert (per_query[qid]["mrr@1"], per_query[qid]["mrr@2"]) == (0.0, 0.0)
        assert per_query[qid]["mrr@3"] == per_query[qid]["mrr@10"] == per_query[qid]["mrr"]
    assert per_query["q3"]["mrr@10"] == 0.0
    level2 = evaluate(QRELS, RUN, ["mrr@2", "mrr@3"], relevance_level=2).per_query
    assert (level2["q1"]["mrr@2"], level2["q1"]["mrr@3"], level2["q2"]["mrr@3"]) == (0.0, pytest.approx(1 / 3), 0.0)


def test_bare_mrr_stays_whole_ranking_with_ks() -> None:
    result = evaluate(QRELS, RUN, ["mrr", "hits"], ks=[1, 5])
    assert [m.name for m in result.measures] == ["mrr", "hits@1", "hits@5"]


def top_k(run: dict, k: int) -> dict:
    """The run cut to each query's top k in trec_eval's order: score descending, then docid descending (bytes)."""
    return {
        qid: dict(sorted(docs.items(), key=lambda item: (item[1], item[0].encode("utf-8")), reverse=True)[:k])
        for qid, docs in run.items()
    }


def renamed(table: dict, prefix: str) -> dict:
    """Fresh query ids: trec_eval caches per-query state keyed by the query id across calls."""
    return {f"{prefix}{qid}": docs for qid, docs in table.items()}


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    tie_mode=st.sampled_from(["integers", "all-equal", "one-decimal"]),
    relevance_level=st.sampled_from([1, 2]),
)
def test_hits_equals_pytrec_precision_times_k(seed: int, tie_mode: str, relevance_level: int) -> None:
    qrels, run = random_case(seed, tie_mode)
    ours = evaluate(qrels, run, [f"hits@{k}" for k in KS], relevance_level=relevance_level).per_query
    names = {f"P.{','.join(map(str, KS))}"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, names, relevance_level=relevance_level).evaluate(run)
    assert set(theirs) == set(run) & set(qrels)
    for qid, values in theirs.items():
        for k in KS:
            assert ours[qid][f"hits@{k}"] == pytest.approx(values[f"P_{k}"] * k, abs=1e-12), (qid, k)
    for qid in set(qrels) - set(run):
        assert all(ours[qid][f"hits@{k}"] == 0 for k in KS)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    tie_mode=st.sampled_from(["integers", "all-equal", "one-decimal"]),
    relevance_level=st.sampled_from([1, 2]),
)
def test_rr_at_k_equals_pytrec_recip_rank_on_the_cut_run(seed: int, tie_mode: str, relevance_level: int) -> None:
    qrels, run = random_case(seed, tie_mode)
    ours = evaluate(qrels, run, ["mrr", *(f"mrr@{k}" for k in KS)], relevance_level=relevance_level).per_query
    for k in KS:
        prefix = f"k{k}-"
        evaluator = pytrec_eval.RelevanceEvaluator(
            renamed(qrels, prefix), {"recip_rank"}, relevance_level=relevance_level
        )
        theirs = evaluator.evaluate(renamed(top_k(run, k), prefix))
        assert set(theirs) == {prefix + qid for qid in set(run) & set(qrels)}
        for qid in set(run) & set(qrels):
            assert ours[qid][f"mrr@{k}"] == pytest.approx(theirs[prefix + qid]["recip_rank"], abs=1e-12), (qid, k)
            assert ours[qid][f"mrr@{k}"] in (0.0, ours[qid]["mrr"])
        for qid in set(qrels) - set(run):
            assert ours[qid][f"mrr@{k}"] == 0
