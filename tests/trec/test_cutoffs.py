"""Every measure that takes a cut-off changes with it, on a fixture built to show it.

A kernel that ignored its cut-off (computing the whole ranking whatever k) would pass every test that
compares one k against a reference computed the same wrong way; here each family of the registry with a
cut-off is asked at several cut-offs of one ranking whose relevant, non-relevant and unjudged documents
are spread so that every such measure moves between them. A new family with a cut-off is covered too.
"""

from __future__ import annotations

import pytest

from ultra_trec.engine import evaluate
from ultra_trec.measures import FAMILIES, Family, Measure

# One query, 30 retrieved documents in rank order. Relevant (grades 1-3) at ranks 3, 5, 8, 13, 21; judged
# non-relevant at ranks 1, 2, 4, 9; the rest unjudged; two relevant documents are never retrieved (R = 7).
RANKED = [f"d{rank:02d}" for rank in range(1, 31)]
GRADES = {"d03": 3, "d05": 1, "d08": 2, "d13": 1, "d21": 3, "d01": 0, "d02": 0, "d04": 0, "d09": 0}
QRELS = {"q1": {**GRADES, "missing1": 2, "missing2": 1}}
RUN = {"q1": {doc: 100.0 - rank for rank, doc in enumerate(RANKED)}}
RANKS = (1, 2, 4, 6, 10, 25)  # each k below, between and beyond the relevant documents
FRACTIONS = (0.2, 0.5, 1.0, 2.0)  # recall levels / multiples of R


def with_cutoff() -> list[Family]:
    return [family for family in FAMILIES.values() if family.cutoff != "none"]


def test_the_registry_has_families_with_cutoffs_of_both_kinds() -> None:
    params = {family.param for family in with_cutoff()}
    assert params == {"rank", "fraction"} and len(with_cutoff()) >= 10


@pytest.mark.parametrize("family", with_cutoff(), ids=[f.name for f in with_cutoff()])
def test_each_cutoff_measure_changes_with_its_cutoff(family: Family) -> None:
    cutoffs = FRACTIONS if family.param == "fraction" else RANKS
    chosen = [Measure(family.name, k) for k in cutoffs]
    result = evaluate(QRELS, RUN, chosen)
    values = [result.text[m.name][0] if family.aggregate == "text" else result.aggregate[m.name] for m in chosen]
    assert len(set(values)) >= 2, f"{family.name} at {cutoffs}: {values}"
