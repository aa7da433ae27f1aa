"""Measure names: parsing, printing, UltraRAG expansion and errors."""

from __future__ import annotations

import pytest

from ultra_base.errors import InputError
from ultra_trec.measures import Measure, parse_measure, parse_measures


@pytest.mark.parametrize(
    ("text", "name", "trec"),
    [
        ("ndcg_cut_10", "ndcg@10", "ndcg_cut_10"),
        ("nDCG@10", "ndcg@10", "ndcg_cut_10"),
        ("P.5", "P@5", "P_5"),
        ("precision@5", "P@5", "P_5"),
        ("recip_rank", "mrr", "recip_rank"),
        ("Rprec", "R-prec", "Rprec"),
        ("map_cut_100", "map@100", "map_cut_100"),
        ("R@100", "recall@100", "recall_100"),
        ("success_1", "success@1", "success_1"),
        ("ndcg", "ndcg", "ndcg"),
        ("RR@10", "mrr@10", "mrr@10"),
        ("recip_rank_10", "mrr@10", "mrr@10"),
        ("hits@5", "hits@5", "hits@5"),
        ("Hits_5", "hits@5", "hits@5"),
        ("hit_rate@5", "success@5", "success_5"),
    ],
)
def test_spellings_parse_and_print_back(text: str, name: str, trec: str) -> None:
    measure = parse_measure(text)
    assert (measure.name, measure.trec_name) == (name, trec)
    assert parse_measure(measure.name) == measure


def test_ultrarag_names_expand_over_ks() -> None:
    names = [m.name for m in parse_measures(["mrr", "map", "recall", "ndcg", "precision"], [1, 5])]
    assert names == ["mrr", "map", "recall@1", "recall@5", "ndcg@1", "ndcg@5", "P@1", "P@5"]


def test_hits_is_a_count_not_success_and_mrr_stays_whole_ranking() -> None:
    assert parse_measure("hits@5") != parse_measure("success@5")
    assert parse_measure("hit_rate@5") == parse_measure("success@5")
    names = [m.name for m in parse_measures(["mrr", "hits", "hit_rate", "mrr@10"], [1, 5])]
    assert names == ["mrr", "hits@1", "hits@5", "success@1", "success@5", "mrr@10"]


def test_without_ks_bare_ndcg_is_whole_ranking_and_duplicates_drop() -> None:
    assert parse_measures(["ndcg", "ndcg@10", "ndcg_cut_10"], []) == [Measure("ndcg"), Measure("ndcg", 10)]


@pytest.mark.parametrize("bad", ["foo", "ndcg@0", "P@-1", "R-prec@10", "mrr@0", "ndcg@x", "", "P.5,x", "f1@10"])
def test_bad_names_fail_clearly(bad: str) -> None:
    with pytest.raises(InputError) as error:
        parse_measures([bad])
    message = str(error.value)
    assert bad in message or "positive" in message or "cutoff" in message
    if bad == "foo":
        assert "known measures: runid, num_q, num_ret" in message


@pytest.mark.parametrize("single", ["P", "hits", "P.5,10", "iprec_at_recall"])
def test_one_measure_is_asked_where_several_would_come(single: str) -> None:
    with pytest.raises(InputError, match="cutoff|names 2 measures"):
        parse_measure(single)


def test_ks_must_be_positive() -> None:
    with pytest.raises(InputError, match="positive"):
        parse_measures(["recall"], [0])


def test_recall_levels_round_half_away_from_zero_as_trec_eval_10() -> None:
    import numpy as np

    from ultra_trec.scoring import suffix_max
    from ultra_trec.scoring_sets import recall_cutoff

    # 0.5 * 3 = 1.5 -> 2 and 0.1 * 25 = 2.5 -> 3 (lround); trec_eval 9's floor(x * R + 0.9) gives 2 and 3 too,
    # but 0.1 * 5 = 0.5 -> 1 where trec_eval 9 gives floor(1.4) = 1 and 0.3 * 5 = 1.5 -> 2 where it gives 2.
    assert recall_cutoff(0.5, np.array([1.0, 3.0, 5.0])).tolist() == [1.0, 2.0, 3.0]
    assert recall_cutoff(0.1, np.array([4.0, 5.0, 25.0])).tolist() == [0.0, 1.0, 3.0]
    assert recall_cutoff(0.7, np.array([3.0])).tolist() == [2.0]  # 2.1 -> 2; trec_eval 9: floor(3.0) = 3
    query = np.array([0, 0, 0, 1, 1, 2])
    values = np.array([0.2, 0.5, 0.1, 0.3, 0.9, 0.4])
    assert suffix_max(query, values).tolist() == [0.5, 0.5, 0.1, 0.9, 0.9, 0.4]
