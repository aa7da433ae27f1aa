"""Retrieval measures: the registry of measure families, parsing and printing of measure names.

A measure is a family (``ndcg``) plus an optional rank cutoff (``ndcg@10``). Its printed name is
the key of the result and parses back to the same measure. Every family is declared once, in
``FAMILIES``: names, cutoff rule, description and the function computing it. Error messages,
the tools' field descriptions and ``registry_markdown()`` are generated from there. Names are
parsed with the registry and a regular expression, never ``eval``; case does not matter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from servers.core.errors import InputError
from servers.core.trec import scoring

CUTOFF_RULES = ("none", "optional", "required")


@dataclass(frozen=True)
class Family:
    """A kind of measure, declared once: everything the parser, engine and documentation need.

    ``trec_name`` / ``trec_cut_name``: trec_eval's name without / with a cutoff (``ndcg`` /
    ``ndcg_cut`` in ``ndcg_cut_10``); None where trec_eval has no such measure (``hits``, ``mrr@k``);
    ``expands_over_ks``: a bare name becomes one measure per k of ``ks``;
    ``needs_judged_nonrelevant``: the measure reads judged documents below the relevance level
    (bpref would; the ranker then has to keep them).
    """

    name: str
    trec_name: str | None
    trec_cut_name: str | None
    aliases: tuple[str, ...]
    cutoff: str  # one of CUTOFF_RULES
    expands_over_ks: bool
    needs_judged_nonrelevant: bool
    description: str
    compute: Callable[[scoring.Judged, int | None], np.ndarray]

    def spellings(self) -> list[str]:
        """Every accepted name without cutoff, lower-cased."""
        names = [self.name, self.trec_name, self.trec_cut_name, *self.aliases]
        return list(dict.fromkeys(n.lower() for n in names if n))

    def usage(self) -> list[str]:
        """How the family is written with our names: ``mrr``; ``ndcg``, ``ndcg@k``; ``P@k``."""
        bare = [self.name] if self.cutoff != "required" else []
        return bare + ([f"{self.name}@k"] if self.cutoff != "none" else [])

    def trec_names(self) -> list[str]:
        """trec_eval's names: ``ndcg``, ``ndcg_cut_k`` (only the forms trec_eval computes)."""
        bare = [self.trec_name] if self.cutoff != "required" and self.trec_name else []
        return bare + ([f"{self.trec_cut_name}_k"] if self.cutoff != "none" and self.trec_cut_name else [])


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family(
            name="map",
            trec_name="map",
            trec_cut_name="map_cut",
            aliases=("AP",),
            cutoff="optional",
            expands_over_ks=False,
            needs_judged_nonrelevant=False,
            description="mean average precision (at k: only the top k count, still / R)",
            compute=scoring.average_precision,
        ),
        Family(
            name="mrr",
            trec_name="recip_rank",
            trec_cut_name=None,
            aliases=("RR",),
            cutoff="optional",
            expands_over_ks=False,
            needs_judged_nonrelevant=False,
            description="reciprocal rank of the first relevant document (at k: 0 if it is below rank k)",
            compute=scoring.reciprocal_rank,
        ),
        Family(
            name="P",
            trec_name="P",
            trec_cut_name="P",
            aliases=("precision",),
            cutoff="required",
            expands_over_ks=True,
            needs_judged_nonrelevant=False,
            description="precision at k: relevant in the top k / k",
            compute=scoring.precision,
        ),
        Family(
            name="recall",
            trec_name="recall",
            trec_cut_name="recall",
            aliases=("R",),
            cutoff="required",
            expands_over_ks=True,
            needs_judged_nonrelevant=False,
            description="recall at k: relevant in the top k / R",
            compute=scoring.recall,
        ),
        Family(
            name="ndcg",
            trec_name="ndcg",
            trec_cut_name="ndcg_cut",
            aliases=(),
            cutoff="optional",
            expands_over_ks=True,
            needs_judged_nonrelevant=False,
            description="nDCG with linear gains (the grades), log2(rank+1) discount",
            compute=scoring.ndcg,
        ),
        Family(
            name="success",
            trec_name="success",
            trec_cut_name="success",
            aliases=("hit_rate",),
            cutoff="required",
            expands_over_ks=True,
            needs_judged_nonrelevant=False,
            description="1 if a relevant document is in the top k",
            compute=scoring.success,
        ),
        Family(
            name="hits",
            trec_name=None,
            trec_cut_name=None,
            aliases=(),
            cutoff="required",
            expands_over_ks=True,
            needs_judged_nonrelevant=False,
            description="relevant documents in the top k, a count (ranx's hits)",
            compute=scoring.hits,
        ),
        Family(
            name="R-prec",
            trec_name="Rprec",
            trec_cut_name=None,
            aliases=(),
            cutoff="none",
            expands_over_ks=False,
            needs_judged_nonrelevant=False,
            description="precision at rank R (R = relevant documents of the query)",
            compute=scoring.r_precision,
        ),
    )
}

# Lower-cased spelling (without cutoff) -> family name.
ALIASES: dict[str, str] = {spelling: f.name for f in FAMILIES.values() for spelling in f.spellings()}

COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")

_NAME = re.compile(r"^(?P<family>[A-Za-z][A-Za-z_\-]*?)(?:(?:@|_|\.)(?P<k>[^@_.]+))?$")


def _check_registry() -> None:
    """Each spelling names one family; each rule is known (checked once, at import)."""
    owners: dict[str, str] = {}
    for family in FAMILIES.values():
        if family.cutoff not in CUTOFF_RULES or (family.expands_over_ks and family.cutoff == "none"):
            raise AssertionError(f"{family.name}: cutoff {family.cutoff!r} cannot expand over ks")
        for spelling in family.spellings():
            if owners.setdefault(spelling, family.name) != family.name:
                raise AssertionError(f"{spelling!r} names both {owners[spelling]} and {family.name}")


_check_registry()


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
    def in_trec_eval(self) -> bool:
        """Whether trec_eval computes this measure (``mrr``, not ``mrr@10``; not ``hits@k``)."""
        family = FAMILIES[self.family]
        return (family.trec_name if self.k is None else family.trec_cut_name) is not None

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints for this measure (``P_5``, ``ndcg_cut_10``, ``recip_rank``);
        a measure trec_eval does not compute keeps its own name (``mrr@10``, ``hits@5``)."""
        family = FAMILIES[self.family]
        if not self.in_trec_eval:
            return self.name
        if self.k is None:
            return family.trec_name  # type: ignore[return-value]
        return f"{family.trec_cut_name}_{self.k}"

    @property
    def description(self) -> str:
        """One line saying what the measure computes."""
        return FAMILIES[self.family].description

    def compute(self, judged: scoring.Judged) -> np.ndarray:
        """Per-query values, by the function the registry names for this family."""
        return FAMILIES[self.family].compute(judged, self.k)

    def __str__(self) -> str:
        return self.name


def describe_names() -> str:
    """Every accepted measure name, from the registry (for error messages and field descriptions)."""
    families = FAMILIES.values()
    ours = [f"{f.name}@k" if f.cutoff == "required" else f.name for f in families]
    optional = [f"{f.name}@k" for f in families if f.cutoff == "optional"]
    trec = [n for f in families for n in f.trec_names() if n not in f.usage()]
    aliases = [a for f in families for a in f.aliases]
    expanding = [f.name for f in families if f.expands_over_ks]
    return (
        f"{', '.join(ours)}; with an optional cutoff: {', '.join(optional)}; trec_eval names: "
        f"{', '.join(trec)} (k after _, . or @); aliases: {', '.join(aliases)}; "
        f"bare {', '.join(expanding)} (or an alias) expand over ks"
    )


def known_names() -> str:
    """The sentence listing every accepted measure name, used in error messages."""
    return f"known measures: {describe_names()}"


def registry_markdown() -> str:
    """A Markdown table of the measure families: the documentation's list of measures."""
    rows = [
        "| name | trec_eval name | aliases | cutoff | needs judged non-relevant | description |",
        "|---|---|---|---|---|---|",
    ]
    for f in FAMILIES.values():
        cutoff = f.cutoff + (", bare name expands over ks" if f.expands_over_ks else "")
        rows.append(
            f"| {', '.join(f.usage())} | {', '.join(f.trec_names()) or '-'} | {', '.join(f.aliases) or '-'} "
            f"| {cutoff} | {'yes' if f.needs_judged_nonrelevant else 'no'} | {f.description} |"
        )
    return "\n".join(rows) + "\n"


def parse_measure(text: str) -> Measure:
    """Parse one measure name (``ndcg@10``, ``P_5``, ``recip_rank``) into a Measure."""
    return Measure(*_parse_name(text))


def parse_measures(names: str | Sequence[str | Measure], ks: Iterable[int] | None = None) -> list[Measure]:
    """Parse a list of names, expanding UltraRAG-style bare names over ``ks``.

    A bare name of a family that expands (``precision``, ``recall``, ``success``, ``hits``,
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
        expands = k is None and FAMILIES[family].expands_over_ks
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
