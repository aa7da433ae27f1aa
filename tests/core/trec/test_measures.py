"""Measure names: parsing, printing, UltraRAG expansion and errors."""

from __future__ import annotations

import pytest

from servers.core.errors import InputError
from servers.core.trec.measures import Measure, parse_measure, parse_measures


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


@pytest.mark.parametrize("bad", ["foo", "ndcg@0", "P@-1", "R-prec@10", "mrr@0", "ndcg@x", "", "P", "hits"])
def test_bad_names_fail_clearly(bad: str) -> None:
    with pytest.raises(InputError) as error:
        parse_measures([bad])
    message = str(error.value)
    assert bad in message or "positive" in message or "cutoff" in message
    if bad == "foo":
        assert "known measures: map, mrr, P@k" in message


def test_ks_must_be_positive() -> None:
    with pytest.raises(InputError, match="positive"):
        parse_measures(["recall"], [0])
