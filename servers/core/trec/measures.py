"""Retrieval measures as small value objects: parsing, printing and the registry of known names.

A measure is a family (``ndcg``) plus an optional rank cutoff (``ndcg@10``). Its printed name is
the key of the result and parses back to the same measure. Names are parsed with a registry and
a regular expression, never ``eval``. Accepted spellings, case-insensitive:

* our names: ``map``, ``mrr``, ``P@5``, ``recall@100``, ``ndcg``, ``ndcg@10``, ``success@1``,
  ``map@10``, ``R-prec``;
* trec_eval names: ``recip_rank``, ``P_5``, ``P.5``, ``ndcg_cut_10``, ``map_cut_10``, ``Rprec``;
* UltraRAG / ir_measures aliases: ``precision``, ``RR``, ``AP``, ``nDCG@10``, ``R@100``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from servers.core.errors import InputError


@dataclass(frozen=True)
class Family:
    """A kind of measure: its canonical name, trec_eval name and whether it takes a cutoff."""

    name: str
    trec_name: str
    trec_cut_name: str | None
    cutoff: str  # "none" | "optional" | "required"
    description: str


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family("map", "map", "map_cut", "optional", "mean average precision (at k: only the top k count, still / R)"),
        Family("mrr", "recip_rank", None, "none", "reciprocal rank of the first relevant document"),
        Family("P", "P", "P", "required", "precision at k: relevant in the top k / k"),
        Family("recall", "recall", "recall", "required", "recall at k: relevant in the top k / R"),
        Family("ndcg", "ndcg", "ndcg_cut", "optional", "nDCG with linear gains, log2(rank+1) discount"),
        Family("success", "success", "success", "required", "1 if a relevant document is in the top k"),
        Family("R-prec", "Rprec", None, "none", "precision at rank R (R = relevant documents of the query)"),
    )
}

# Lower-cased aliases (without cutoff) -> family name.
ALIASES: dict[str, str] = {
    "map": "map",
    "ap": "map",
    "map_cut": "map",
    "mrr": "mrr",
    "rr": "mrr",
    "recip_rank": "mrr",
    "p": "P",
    "precision": "P",
    "recall": "recall",
    "r": "recall",
    "ndcg": "ndcg",
    "ndcg_cut": "ndcg",
    "success": "success",
    "hits": "success",
    "r-prec": "R-prec",
    "rprec": "R-prec",
}

COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")

_NAME = re.compile(r"^(?P<family>[A-Za-z][A-Za-z_\-]*?)(?:(?:@|_|\.)(?P<k>[^@_.]+))?$")


@dataclass(frozen=True, order=True)
class Measure:
    """One retrieval measure, e.g. ``Measure("ndcg", 10)`` printed ``ndcg@10``."""

    family: str
    k: int | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise InputError(f"unknown measure family {self.family!r}; {known_names()}")
        rule = FAMILIES[self.family].cutoff
        if rule == "none" and self.k is not None:
            raise InputError(f"{self.family} takes no cutoff (got @{self.k}); {known_names()}")
        if rule == "required" and self.k is None:
            raise InputError(f"{self.family} needs a cutoff, e.g. {self.family}@10, or give ks")
        if self.k is not None and (isinstance(self.k, bool) or not isinstance(self.k, int) or self.k <= 0):
            raise InputError(f"cutoff k must be a positive integer, got {self.k!r} for {self.family}")

    @property
    def name(self) -> str:
        """The printed name, also the result key (``P@5``); it parses back to this measure."""
        return self.family if self.k is None else f"{self.family}@{self.k}"

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints for this measure (``P_5``, ``ndcg_cut_10``, ``recip_rank``)."""
        family = FAMILIES[self.family]
        if self.k is None:
            return family.trec_name
        return f"{family.trec_cut_name}_{self.k}"

    @property
    def description(self) -> str:
        """One line saying what the measure computes."""
        return FAMILIES[self.family].description

    def __str__(self) -> str:
        return self.name


def known_names() -> str:
    """The sentence listing every accepted measure name, used in error messages."""
    return (
        "known measures: map, mrr, P@k, recall@k, ndcg, ndcg@k, success@k, map@k, R-prec "
        "(also trec_eval names such as recip_rank, P_5, ndcg_cut_10, Rprec, and UltraRAG's "
        "mrr, map, recall, ndcg, precision expanded over ks)"
    )


def parse_measure(text: str) -> Measure:
    """Parse one measure name (``ndcg@10``, ``P_5``, ``recip_rank``) into a Measure."""
    return Measure(*_parse_name(text))


def parse_measures(names: str | Sequence[str | Measure], ks: Iterable[int] | None = None) -> list[Measure]:
    """Parse a list of names, expanding UltraRAG-style bare names over ``ks``.

    A name without a cutoff whose family accepts one (``precision``, ``recall``, ``success``,
    ``ndcg``) becomes one measure per k when ``ks`` is given; ``map`` and ``mrr`` stay whole-ranking.
    With no ``ks``, a bare ``ndcg`` is nDCG over the whole ranking (list ``ndcg`` and ``ndcg@10``
    with empty ``ks`` to get both). Duplicates are dropped, order kept. An empty list is an error.
    """
    if isinstance(names, (str, Measure)):
        names = [names]
    cutoffs = _parse_ks(ks)
    measures: list[Measure] = []
    for item in names:
        family, k = (item.family, item.k) if isinstance(item, Measure) else _parse_name(item)
        expands = k is None and FAMILIES[family].cutoff != "none" and family != "map"
        if expands and cutoffs:
            measures.extend(Measure(family, cutoff) for cutoff in cutoffs)
        elif expands and FAMILIES[family].cutoff == "required":
            raise InputError(f"{item!r} needs a cutoff: write {family}@10, or give ks (e.g. [1, 5, 10])")
        else:
            measures.append(Measure(family, k))
    if not measures:
        raise InputError(f"no measures given; {known_names()}")
    return list(dict.fromkeys(measures))


def _parse_name(text: str) -> tuple[str, int | None]:
    """(family, cutoff or None) of a measure name; the cutoff is not yet checked against the family."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"a measure name must be a non-empty string, got {text!r}; {known_names()}")
    name = text.strip()
    family = ALIASES.get(name.lower())
    if family is not None:
        return family, None
    match = _NAME.match(name)
    if match is None or (family := ALIASES.get(match.group("family").lower())) is None:
        raise InputError(f"unknown measure {text!r}; {known_names()}")
    raw_k = match.group("k")
    if raw_k is None:
        return family, None
    try:
        k = int(raw_k)
    except ValueError:
        raise InputError(f"cutoff of {text!r} must be a positive integer, got {raw_k!r}") from None
    if k <= 0:
        raise InputError(f"cutoff of {text!r} must be a positive integer (k >= 1), got {k}")
    return family, k


def _parse_ks(ks: Iterable[int] | None) -> list[int]:
    if ks is None:
        return []
    if isinstance(ks, (int, str)):
        ks = [ks]  # type: ignore[list-item]
    cutoffs: list[int] = []
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int):
            try:
                k = int(str(k))
            except ValueError:
                raise InputError(f"ks must be positive integers, got {k!r}") from None
        if k <= 0:
            raise InputError(f"ks must be positive integers, got {k}")
        cutoffs.append(k)
    return list(dict.fromkeys(cutoffs))
