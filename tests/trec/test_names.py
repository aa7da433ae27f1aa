"""The name matrix: every spelling people type maps to the right measure; refused ones fail clearly.

Spellings: ours (``P@5``), trec_eval's (``P_5``, as printed in its outputs), pytrec_eval's
parameterised ones (``P.5,10``) and nicknames (``all_trec``, ``official``), ir_measures/ranx's
(``nDCG@10``, ``RR@10``, ``Judged@10``, ``hit_rate@k``, ``hits@k``, ``precision``/``recall``/``f1``).
"""

from __future__ import annotations

import pytest

from tests.trec.test_conformance import DATA, printed_names, reference
from ultra_base.errors import InputError
from ultra_trec.engine import evaluate
from ultra_trec.measures import FAMILIES, Measure, parse_measure, parse_measures
from ultra_trec.registry import NICKNAMES, TREC_CUTOFFS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # trec_eval
        ("ndcg_cut_10", Measure("ndcg", 10)),
        ("iprec_at_recall_0.10", Measure("iprec_at_recall", 0.1)),
        ("Rprec_mult_0.20", Measure("Rprec_mult", 0.2)),
        ("Rprec", Measure("R-prec")),
        ("relative_P_5", Measure("relative_P", 5)),
        ("unj_20", Measure("unj", 20)),
        ("relstring_20", Measure("relstring", 20)),
        ("11pt_avg", Measure("11pt_avg")),
        ("set_F", Measure("set_F")),
        ("num_nonrel_judged_ret", Measure("num_nonrel_judged_ret")),
        ("gm_bpref", Measure("gm_bpref")),
        # pytrec_eval's single-parameter forms and trec_eval's leading-dot fractions
        ("P.5", Measure("P", 5)),
        ("iprec_at_recall..25", Measure("iprec_at_recall", 0.25)),
        ("Rprec_mult.5.0", Measure("Rprec_mult", 5.0)),
        # ir_measures / ranx
        ("nDCG@10", Measure("ndcg", 10)),
        ("RR@10", Measure("mrr", 10)),
        ("AP@100", Measure("map", 100)),
        ("Judged@10", Measure("Judged", 10)),
        ("hit_rate@5", Measure("success", 5)),
        ("hits@5", Measure("hits", 5)),
        ("R@100", Measure("recall", 100)),
        ("IPrec@0.5", Measure("iprec_at_recall", 0.5)),
        ("precision", Measure("set_P")),
        ("recall", Measure("set_recall")),
        ("f1", Measure("set_F")),
        # ours
        ("iprec_at_recall@0.10", Measure("iprec_at_recall", 0.1)),
        ("mrr", Measure("mrr")),
    ],
)
def test_each_spelling_maps_to_its_measure(text: str, expected: Measure) -> None:
    assert parse_measure(text) == expected
    assert parse_measure(expected.name) == expected  # our printed name parses back
    if expected.in_trec_eval:
        assert parse_measure(expected.trec_name) == expected


@pytest.mark.parametrize("output", ["out.test.aq", "out.test.aql", "out.test.meas_params"])
def test_every_name_trec_eval_prints_parses_back_to_it(output: str) -> None:
    parameterised = {"ndcg_1=3,2=9,4=4.5", "utility_2,-1,0,0", "11pt_avg_.25,.5,.75"}
    for name in printed_names(reference(output)) - parameterised:
        assert parse_measure(name).trec_name == name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("P.5,10", ["P@5", "P@10"]),
        ("ndcg_cut.1,4", ["ndcg@1", "ndcg@4"]),
        ("success.1,5,10", ["success@1", "success@5", "success@10"]),
        ("iprec_at_recall..10,.20,.25", ["iprec_at_recall@0.10", "iprec_at_recall@0.20", "iprec_at_recall@0.25"]),
        # a bare cutoff name without ks: trec_eval's default cutoffs, each family its own
        ("P", [f"P@{k}" for k in TREC_CUTOFFS]),
        ("ndcg_cut", [f"ndcg@{k}" for k in TREC_CUTOFFS]),
        ("success", ["success@1", "success@5", "success@10"]),
        ("unj", ["unj@5", "unj@10", "unj@20"]),
        ("iprec_at_recall", [f"iprec_at_recall@{x / 10:.2f}" for x in range(11)]),
        ("Rprec_mult", [f"Rprec_mult@{x / 10:.2f}" for x in range(2, 21, 2)]),
        # without a cutoff, ndcg and map are the whole ranking
        ("ndcg", ["ndcg"]),
        ("map", ["map"]),
    ],
)
def test_several_measures_from_one_name(text: str, expected: list[str]) -> None:
    assert [m.name for m in parse_measures([text], [])] == expected


def test_ks_take_precedence_over_defaults_for_bare_names() -> None:
    names = [m.name for m in parse_measures(["recall", "ndcg_cut", "map", "iprec_at_recall"], [1, 5])]
    assert names[:5] == ["recall@1", "recall@5", "ndcg@1", "ndcg@5", "map"]
    assert names[5:] == [f"iprec_at_recall@{x / 10:.2f}" for x in range(11)]  # ks are ranks, not recall levels


def test_nicknames_give_trec_eval_lists() -> None:
    official = [m.trec_name for m in parse_measures(["official"])]
    assert official[:10] == [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
    ]
    assert {m.trec_name for m in parse_measures(["official"])} == printed_names(reference("out.test"))
    assert {m.family for m in parse_measures(["all_trec"])} == {
        name for name, f in FAMILIES.items() if f.trec_name or f.trec_cut_name
    }
    assert [m.name for m in parse_measures(["ALL_TREC"], [1, 2])] == [m.name for m in parse_measures(["all_trec"])]
    assert set(NICKNAMES) == {"official", "all_trec", "set"}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("nope", "unknown measure 'nope'; known measures:"),
        ("bpref@10", "bpref takes no cutoff"),
        ("set_F@5", "set_F takes no cutoff"),
        ("P@0", "positive integer"),
        ("P.5,x", "'P.5,x': cutoff 'x' is not a number; cutoffs must be positive integers"),
        ("P@1.5", "cutoff '1.5' is not a whole number"),
        ("P_1_0", "cutoff '1_0' is not a whole number"),  # Python's int would read 10
        ("iprec_at_recall@abc", "'abc' is not a number (e.g. 0.5); trec_eval would silently read 'abc' as 0"),
        ("set_F(1_0)", "'1_0' is not a number (e.g. 0.5); trec_eval would silently read '1_0' as 1"),  # Python: 10
        ("ndcg(1_0=3)", "each name must be an integer grade"),  # Python's int would read 10
        ("ndcg.-1=3", "grade -1 is negative"),
        ("ndcg_1=3,x=9", "each name must be an integer grade"),
        ("utility_2,-1,0", "give 4 numbers"),
        ("11pt_avg_.25,half", "'half' is not a number"),
        ("bpref.1,2", "bpref takes no cutoff"),
        ("", "non-empty string"),
    ],
)
def test_refused_names_say_why(bad: str, message: str) -> None:
    with pytest.raises(InputError) as error:
        parse_measures([bad])
    assert message in str(error.value)


def test_unknown_name_lists_every_family_from_the_registry() -> None:
    with pytest.raises(InputError) as error:
        parse_measures(["nope"])
    for family in FAMILIES.values():
        assert family.usage()[0] in str(error.value)
    for nickname in NICKNAMES:
        assert nickname in str(error.value)


def test_trec_eval_names_output_option() -> None:
    result = evaluate(DATA / "qrels.test", DATA / "results.test", ["mrr", "P@5", "ndcg@10", "hits@5", "runid"])
    renamed = result.renamed("trec_eval")
    assert list(renamed.aggregate) == ["recip_rank", "P_5", "ndcg_cut_10", "hits@5"]  # hits: trec_eval has none
    assert renamed.aggregate["P_5"] == result.aggregate["P@5"] == pytest.approx(0.2667, abs=1e-4)
    assert renamed.per_query["301"]["runid"] == "STANDARD"
    assert renamed.to_dict()["settings"]["measures"] == ["recip_rank", "P_5", "ndcg_cut_10", "hits@5", "runid"]
    assert result.renamed("ultrarag") is result
    with pytest.raises(InputError, match="names must be"):
        result.renamed("pytrec")


def test_judged_at_k_by_hand() -> None:
    """ir_measures' own example: every document of q0 is judged, one of q1's four (1/4)."""
    qrels = {
        "0": {"D0": 0, "D1": 1, "D2": 1, "D3": 2, "D4": 0},
        "1": {"D0": 1, "D3": 2, "D5": 2},
    }
    run = {
        "0": {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1},
        "1": {"D1": 0.8, "D3": 0.7, "D4": 0.3, "D2": 0.4},
    }
    per_query = evaluate(qrels, run, ["Judged@1", "Judged@2", "Judged@1000", "unj@2"]).per_query
    assert [per_query["0"][m] for m in ("Judged@1", "Judged@2", "Judged@1000")] == [1.0, 1.0, 1.0]
    assert [per_query["1"][m] for m in ("Judged@1", "Judged@2", "Judged@1000")] == [0.0, 0.5, 0.25]
    assert per_query["1"]["unj@2"] == 0.5
