"""The measure registry: every name it declares is accepted, listed and documented, and its compute is used."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import pytrec_eval

from tests.trec.test_properties import random_case
from ultra_base.errors import InputError
from ultra_base.registry import RegistryError
from ultra_trec import measures
from ultra_trec.engine import evaluate
from ultra_trec.measures import FAMILIES, Measure, known_names, parse_measure, parse_measures

KS = (1, 3, 10)
SUPPORTED_BY_PYTREC = set(pytrec_eval.supported_measures)


def spellings_of(family: measures.Family) -> list[str]:
    return [*family.usage(), *family.trec_names(), *family.aliases]


FRACTIONS = (0.0, 0.3, 1.0)


def measures_of(family: measures.Family) -> list[Measure]:
    bare = [Measure(family.name)] if family.cutoff != "required" else []
    params = FRACTIONS if family.param == "fraction" else KS
    return bare + ([Measure(family.name, k) for k in params] if family.cutoff != "none" else [])


@pytest.mark.parametrize("family", FAMILIES.values(), ids=list(FAMILIES))
def test_known_names_list_every_name_and_alias(family: measures.Family) -> None:
    listed = known_names()
    for name in spellings_of(family):
        assert name in listed, name


@pytest.mark.parametrize("family", FAMILIES.values(), ids=list(FAMILIES))
def test_every_spelling_parses_to_its_family(family: measures.Family) -> None:
    for spelling in family.spellings():
        for text in (spelling, spelling.upper()):
            if family.cutoff == "required":
                assert parse_measure(f"{text}@5") == Measure(family.name, 5)
            else:
                assert parse_measure(text) == Measure(family.name)
    for measure in measures_of(family):
        assert parse_measure(measure.name) == measure
        assert parse_measure(measure.trec_name) == measure


@pytest.mark.parametrize("family", FAMILIES.values(), ids=list(FAMILIES))
def test_cutoff_rule_and_expansion_follow_the_entry(family: measures.Family) -> None:
    expanded = parse_measures([family.name], [2, 4])
    if family.expands_over_ks:
        assert expanded == [Measure(family.name, 2), Measure(family.name, 4)]
    elif family.cutoff != "required":
        assert expanded == [Measure(family.name)]
    if family.cutoff == "none":
        with pytest.raises(InputError, match="takes no cutoff"):
            parse_measure(f"{family.name}@5")


def test_registry_markdown_has_a_row_per_family() -> None:
    table = measures.registry_markdown().split("\n\n")[0].splitlines()
    assert table[0] == "| name | trec_eval name | aliases | parameter | summary | needs judged non-relevant |"
    assert len(table) == 2 + len(FAMILIES)
    for line, family in zip(table[2:], FAMILIES.values(), strict=True):
        assert line.startswith(f"| {', '.join(family.usage())} | {', '.join(family.trec_names()) or '-'} |")


@pytest.mark.parametrize("field", ["description", "citation"])
def test_a_family_without_a_description_or_citation_fails_naming_it(field: str) -> None:
    with pytest.raises(RegistryError, match=rf"measure family 'map': field '{field}' is empty"):
        FAMILIES.replaced(dataclasses.replace(FAMILIES["map"], **{field: " "}))


@pytest.mark.parametrize("family", FAMILIES.values(), ids=list(FAMILIES))
def test_the_entry_compute_function_is_what_the_engine_calls(
    family: measures.Family, monkeypatch: pytest.MonkeyPatch
) -> None:
    def value(k):
        return 0.5 if k is None else 1.0 / (k + 1)

    def marker(judged, k):
        return np.full(judged.num_queries, value(k))

    monkeypatch.setattr(measures, "FAMILIES", FAMILIES.replaced(dataclasses.replace(family, compute=marker)))
    qrels, run = {"q1": {"d1": 1}, "q2": {"d2": 2}}, {"q1": {"d1": 1.0}, "q2": {"d3": 1.0}}
    result = evaluate(qrels, run, measures_of(family))
    for measure in measures_of(family):
        expected = value(measure.k)
        if family.aggregate == "text":  # per-query strings, no summary
            assert result.text[measure.name] == [str(expected)] * 2
            continue
        summary = {"mean": expected, "sum": 2 * expected, "geometric": np.exp(expected)}[family.aggregate]
        assert result.aggregate[measure.name] == pytest.approx(summary, rel=1e-15)


def trec_measures_of(family: measures.Family) -> list[Measure]:
    """The measures of ``measures_of`` that trec_eval computes (not ``mrr@k``, not ``hits@k``)."""
    return [m for m in measures_of(family) if m.in_trec_eval]


def pytrec_names(family: measures.Family) -> set[str]:
    """The measures pytrec_eval is asked for: trec_eval names, with the cutoffs as its parameters."""
    chosen = trec_measures_of(family)
    names = {family.trec_name for m in chosen if m.k is None}
    cutoffs = [m.k for m in chosen if m.k is not None]
    if cutoffs:
        names.add(f"{family.trec_cut_name}.{','.join(map(str, cutoffs))}")
    return names


@pytest.mark.parametrize("family", FAMILIES.values(), ids=list(FAMILIES))
@pytest.mark.parametrize("seed", range(8))
def test_each_family_agrees_with_pytrec_eval(family: measures.Family, seed: int) -> None:
    # Families trec_eval lacks (hits; and mrr@k) are checked in test_cut_measures.py.
    names = pytrec_names(family)
    if not names or not {name.split(".")[0] for name in names} <= SUPPORTED_BY_PYTREC:
        pytest.skip(f"pytrec_eval has no {family.trec_name or family.name}")
    if family.aggregate == "text" or family.param == "fraction" or family.name == "11pt_avg":
        pytest.skip("text, or recall levels rounded as trec_eval 9 does (test_properties swaps the rule)")
    qrels, run = random_case(1000 + seed, ("integers", "all-equal", "normal")[seed % 3])
    for level in (1, 2):
        ours = evaluate(qrels, run, measures_of(family), relevance_level=level).per_query
        theirs = pytrec_eval.RelevanceEvaluator(qrels, names, relevance_level=level).evaluate(run)
        for qid, values in theirs.items():
            for measure in trec_measures_of(family):
                assert ours[qid][measure.name] == pytest.approx(values[measure.trec_name], abs=1e-12), (
                    qid,
                    measure.name,
                )
