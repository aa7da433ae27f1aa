"""Retrieval measures: the registry of measure families, parsing and printing of measure names.

A measure is a family (``ndcg``) plus an optional parameter: a rank cutoff (``ndcg@10``) or, for
``iprec_at_recall`` and ``Rprec_mult``, a fraction (``iprec_at_recall@0.10``). Its printed name is
the key of the result and parses back to the same measure. Every family is declared once, in
``FAMILIES`` (``registry.py``). Error messages, the tools' field descriptions and
``registry_markdown()`` are generated from there. Accepted spellings: ours (``P@5``), trec_eval's
(``P_5``), pytrec_eval's parameterised ones (``P.5,10``, ``ndcg_cut.1,4``) and nicknames
(``all_trec``, ``official``, ``set``), ir_measures/ranx's (``nDCG@10``, ``RR@10``, ``Judged@10``).
Names are matched against the registry (longest spelling first), never ``eval``; case does not matter.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ultra_base.errors import InputError
from ultra_trec.c_numbers import parameter_number, rank_cutoff
from ultra_trec.registry import FAMILIES, NICKNAMES, WHOLE_RANKING, Family

__all__ = [
    "FAMILIES",
    "Family",
    "Measure",
    "known_names",
    "parse_measure",
    "parse_measures",
    "definitions_markdown",
    "parse_options",
    "rank_cutoff",
    "registry_markdown",
]

# Lower-cased spelling (without cutoff) -> family name.
ALIASES: dict[str, str] = {spelling: f.name for f in FAMILIES.values() for spelling in f.spellings()}
# Spellings by length, longest first: "rprec_mult_0.2" is Rprec_mult at 0.2, not Rprec.
_BY_LENGTH = sorted(ALIASES, key=len, reverse=True)

COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")
_GRADE = re.compile(r"[+-]?[0-9]+")  # trec_eval's valid_int (gain_init.c): a gain of any other name is ignored


@dataclass(frozen=True)
class Measure:
    """One retrieval measure, e.g. ``Measure("ndcg", 10)`` printed ``ndcg@10``, or a measure with
    trec_eval's own parameters, ``Measure("ndcg", options="1=3,2=9")`` printed ``ndcg(1=3,2=9)``."""

    family: str
    k: int | float | None = None
    options: str | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise InputError(f"unknown measure family {self.family!r}; {known_names()}")
        family = FAMILIES[self.family]
        if self.options is not None:
            if self.k is not None:
                raise InputError(f"{self.family} takes a cutoff or parameters ({self.options!r}), not both")
            object.__setattr__(self, "options", str(self.options))  # as typed, spaces too, as trec_eval reads them
            parse_options(family, self.options)
            return
        if family.cutoff == "none" and self.k is not None:
            raise InputError(f"{self.family} takes no cutoff (got @{self.k}); {known_names()}")
        if family.cutoff == "required" and self.k is None:
            raise InputError(f"{self.family} needs a cutoff, e.g. {self.family}@10, or give ks")
        if self.k is None:
            return
        if family.param == "fraction":
            if isinstance(self.k, bool) or not isinstance(self.k, (int, float)) or not 0 <= self.k < 1e6:
                raise InputError(f"{self.family} takes a non-negative number (e.g. 0.5), got {self.k!r}{_odd(self.k)}")
            object.__setattr__(self, "k", float(self.k))
        elif isinstance(self.k, bool) or not isinstance(self.k, int) or self.k <= 0:
            raise InputError(f"cutoff k must be a positive integer, got {self.k!r} for {self.family}")

    @property
    def name(self) -> str:
        """The printed name, also the result key (``P@5``, ``utility(2,-1,0,0)``); it parses back to this measure."""
        if self.options is not None:
            return f"{self.family}({self.options})"
        return self.family if self.k is None else f"{self.family}@{self._param_text()}"

    @property
    def in_trec_eval(self) -> bool:
        """Whether trec_eval computes this measure (``mrr``, not ``mrr@10``; not ``hits@k``)."""
        family = FAMILIES[self.family]
        return (family.trec_name if self.k is None else family.trec_cut_name) is not None

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints for this measure (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``,
        ``utility_2,-1,0,0``); a measure trec_eval does not compute keeps its own name (``mrr@10``, ``hits@5``)."""
        family = FAMILIES[self.family]
        if not self.in_trec_eval:
            return self.name
        if self.k is None:
            return family.trec_name if self.options is None else f"{family.trec_name}_{self.options}"  # type: ignore[return-value]
        text = f"{self.k:.2f}" if family.param == "fraction" else str(self.k)
        return f"{family.trec_cut_name}_{text}"

    @property
    def description(self) -> str:
        """One line saying what the measure computes."""
        return FAMILIES[self.family].description

    @property
    def aggregate(self) -> str:
        """How the per-query values are summarised: mean, geometric, sum or text."""
        return FAMILIES[self.family].aggregate

    @property
    def needs_judged_nonrelevant(self) -> bool:
        """Whether the ranker must keep every judged document (gains may be given to any grade)."""
        family = FAMILIES[self.family]
        return family.needs_judged_nonrelevant or (self.options is not None and family.options == "gains")

    def compute(self, judged: Any) -> Any:
        """Per-query values, by the function the registry names for this family (given the cutoff or the
        parsed parameters)."""
        family = FAMILIES[self.family]
        return family.compute(judged, self.k if self.options is None else parse_options(family, self.options))

    def _param_text(self) -> str:
        if isinstance(self.k, float):
            short = f"{self.k:.2f}"
            return short if float(short) == self.k else repr(self.k)
        return str(self.k)

    def __str__(self) -> str:
        return self.name


def parse_options(family: Family, text: str) -> Any:
    """trec_eval's parameters of a one-value measure: a tuple of numbers (``numbers``, four
    ``coefficients``), ``{grade: gain}`` (``gains``) or the persistence p (``persistence``)."""
    where = f"parameters {text!r} of {family.name}"
    if family.options == "none":
        raise InputError(f"{family.name} takes no parameters (got {text!r}); {known_names()}")
    parts = [part.strip() for part in text.split(",")]
    if family.options in ("numbers", "coefficients"):
        numbers = tuple(_number_of(part, where) for part in parts)
        if family.options == "coefficients" and len(numbers) != 4:
            raise InputError(f"{where}: give 4 numbers, e.g. {family.name}.1,-1,0,0 ({family.options_help})")
        return numbers
    pairs: dict[str, float] = {}
    for part in text.split(","):  # names as typed: trec_eval compares them unstripped
        name, sep, value = part.partition("=")
        if not sep or name in pairs:
            raise InputError(f"{where}: give distinct name=value pairs, e.g. {family.options_help}")
        pairs[name] = _number_of(value, where)
    if family.options == "persistence":
        if set(pairs) != {"p"} or not 0 < pairs["p"] < 1:
            raise InputError(f"{where}: give the persistence as p=x with 0 < x < 1, e.g. {family.options_help}")
        return pairs["p"]
    gains: dict[int, float] = {}
    for name, gain in pairs.items():
        if not _GRADE.fullmatch(name):
            raise InputError(
                f"{where}: each name must be an integer grade, e.g. {family.options_help} (trec_eval would "
                f"silently ignore the gain of {name!r}: a grade is a sign and digits, nothing else)"
            )
        if int(name) < 0:
            raise InputError(
                f"{where}: grade {name} is negative; give gains of grades 0 and up (trec_eval would give the "
                "gain to the retrieved documents it marks with grade -1, those not in the qrels, or -2, those "
                "judged below 0, and print numbers such as an ndcg above 1)"
            )
        if int(name) in gains:
            raise InputError(f"{where}: grade {int(name)} is given twice; give each grade's gain once")
        gains[int(name)] = gain
    return gains


def _number_of(text: str, where: str) -> float:
    """A finite number: ``nan`` and ``inf`` (which Python's float reads, and C's atof too) give no usable gain."""
    number = parameter_number(text, where)
    if not math.isfinite(number):
        raise InputError(f"{where}: {text!r} is not a finite number")
    return number


def describe_names() -> str:
    """Every accepted measure name, from the registry (for error messages and field descriptions)."""
    families = list(FAMILIES.values())
    ours = [u for f in families for u in f.usage()]
    trec = [n for f in families for n in f.trec_names() if n not in f.usage()]
    aliases = [a for f in families for a in f.aliases]
    expanding = [f.name for f in families if f.expands_over_ks]
    options = [f.options_help for f in families if f.options_help]
    return (
        f"{', '.join(ours)}; trec_eval names: {', '.join(trec)} (parameter after _, . or @; several as P.5,10); "
        f"trec_eval's parameters as name(params) or name.params: {', '.join(options)}; "
        f"aliases: {', '.join(aliases)}; nicknames: {', '.join(NICKNAMES)}; bare {', '.join(expanding)} "
        "expand over ks, or without ks over trec_eval's default cutoffs; without ks, bare "
        f"{', '.join(WHOLE_RANKING)} mean the whole ranking ({', '.join(dict.fromkeys(WHOLE_RANKING.values()))})"
    )


def known_names() -> str:
    """The sentence listing every accepted measure name, used in error messages."""
    return f"known measures: {describe_names()}"


def registry_markdown() -> str:
    """The documentation's list of measures, from the registry: a table of the families (how each is written),
    then each family's description (what it is, with its formula) and citation."""
    table = FAMILIES.table(
        [
            ("name", lambda f: ", ".join(f.usage())),
            ("trec_eval name", lambda f: ", ".join(f.trec_names()) or "-"),
            ("aliases", lambda f: ", ".join(f.aliases) or "-"),
            ("parameter", _parameter),
            ("summary", lambda f: f.aggregate),
            ("needs judged non-relevant", lambda f: "yes" if f.needs_judged_nonrelevant else "no"),
        ]
    )
    return table + "\n" + definitions_markdown()


def _parameter(family: Family) -> str:
    """The docs' parameter cell: the cutoff rule, its defaults, trec_eval's own parameters."""
    f = family
    cutoff = f.cutoff if f.cutoff == "none" else f"{f.cutoff} {'fraction' if f.param == 'fraction' else 'k'}"
    if f.expands_over_ks:
        cutoff += ", bare name expands over ks"
    if f.defaults and f.cutoff != "none":
        cutoff += f"; default {','.join(_number(d) for d in f.defaults)}"
    if f.options_help:
        cutoff += f"; {f.options_help}"
    return cutoff


def definitions_markdown() -> str:
    """One line per family: its name, its description (with the formula) and where it comes from (the docs'
    Definitions)."""
    lines = []
    for f in FAMILIES.values():
        trec = f" (trec_eval: {', '.join(f.trec_names())})" if f.trec_names() else ""
        lines.append(f"- `{f.name}`{trec}: {f.description}. Source: {f.citation}.")
    return "\n".join(lines) + "\n"


def parse_measure(text: str) -> Measure:
    """Parse one measure name (``ndcg@10``, ``P_5``, ``recip_rank``) into a Measure."""
    family, params, _, options = _parse_name(text)
    if options is not None:
        return Measure(family, options=options)
    if params is not None and len(params) != 1:
        raise InputError(f"{text!r} names {len(params)} measures; give one (e.g. {family}@{params[0]})")
    if params is None and text.strip().lower() in WHOLE_RANKING:
        return Measure(WHOLE_RANKING[text.strip().lower()])
    if params is None and FAMILIES[family].cutoff == "required":
        raise InputError(f"{text!r} needs a cutoff: write {family}@10, or give ks (e.g. [1, 5, 10])")
    return Measure(family, None if params is None else params[0])


def parse_measures(names: str | Sequence[str | Measure], ks: Iterable[int] | None = None) -> list[Measure]:
    """Parse a list of names, expanding bare names and nicknames.

    A bare name of a family that expands (``precision``, ``recall``, ``success``, ``hits``,
    ``ndcg``) becomes one measure per k when ``ks`` is given; ``map`` and ``mrr`` stay whole-ranking.
    Without ``ks``: bare ``ndcg``/``map`` are the whole ranking, bare ``precision``/``recall``
    (ranx's spellings) are ``set_P``/``set_recall``, and other bare cutoff names (``P``,
    ``ndcg_cut``, ``success``, ``iprec_at_recall``) take trec_eval's default parameters.
    Nicknames (``all_trec``, ``official``, ``set``) give trec_eval's lists with its defaults.
    Duplicates are dropped, order kept. An empty list is an error.
    """
    if isinstance(names, (str, Measure)):
        names = [names]
    cutoffs = _parse_ks(ks)
    measures: list[Measure] = []
    for item in names:
        if isinstance(item, Measure):
            measures.append(item)
            continue
        nickname = item.strip().lower() if isinstance(item, str) else None
        if nickname in NICKNAMES:
            measures.extend(m for name in NICKNAMES[nickname] for m in _bare(name, []))
            continue
        family, params, spelling, options = _parse_name(item)
        if options is not None:
            measures.append(Measure(family, options=options))
        elif params is not None:
            measures.extend(Measure(family, p) for p in params)
        elif not cutoffs and spelling in WHOLE_RANKING:
            measures.append(Measure(WHOLE_RANKING[spelling]))
        else:
            measures.extend(_bare(spelling, cutoffs))
    if not measures:
        raise InputError(f"no measures given; {known_names()}")
    return list(dict.fromkeys(measures))


def result_names(ir_metrics: str | Sequence[str], ks: Iterable[int] | None, names: str) -> list[str]:
    """The keys of an evaluation's aggregate for these settings, known before it runs: each measure's name
    as ``names`` spells it (``ultrarag``: ``P@5``; ``trec_eval``: ``P_5``); text measures (runid) have none."""
    measures = parse_measures(ir_metrics, ks)
    return [m.trec_name if names == "trec_eval" else m.name for m in measures if m.aggregate != "text"]


def _bare(spelling: str, cutoffs: list[int]) -> list[Measure]:
    """The measures a name without parameter stands for (see ``parse_measures``)."""
    family = FAMILIES[ALIASES[spelling.lower()]]
    cut_spelling = family.trec_cut_name is not None and spelling.lower() not in (
        family.name.lower(),
        (family.trec_name or "").lower(),
    )
    if cutoffs and family.param == "rank" and (family.expands_over_ks or cut_spelling):
        return [Measure(family.name, k) for k in cutoffs]
    if family.cutoff == "required" or cut_spelling:
        return [Measure(family.name, k) for k in family.defaults]
    return [Measure(family.name)]


def _parse_name(text: Any) -> tuple[str, list[int | float] | None, str, str | None]:
    """(family, its cutoffs or None, the spelling used, its parameters or None) of a measure name;
    cutoffs unchecked. ``ndcg(1=3)``, ``ndcg.1=3`` and ``ndcg_1=3`` give parameters; ``P.5,10`` cutoffs."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"a measure name must be a non-empty string, got {text!r}; {known_names()}")
    name = text.strip()
    lower = name.lower()
    if lower in ALIASES:
        return ALIASES[lower], None, lower, None
    base, paren, rest = name.partition("(")
    if paren and rest.endswith(")") and base.lower() in ALIASES:
        return ALIASES[base.lower()], None, base.lower(), rest[:-1]
    for spelling in _BY_LENGTH:
        if lower.startswith(spelling) and len(lower) > len(spelling) and lower[len(spelling)] in "@_.":
            family = FAMILIES[ALIASES[spelling]]
            raw = name[len(spelling) + 1 :]
            if family.options != "none" and lower[len(spelling)] != "@" and (family.cutoff == "none" or "=" in raw):
                return family.name, None, spelling, raw
            return family.name, _parse_params(text, raw, family), spelling, None
    raise InputError(f"unknown measure {text!r}; {known_names()}")


def _parse_params(text: str, raw: str, family: Family) -> list[int | float]:
    """``5`` or ``5,10`` (pytrec_eval) as cutoffs; fractions for recall levels and multiples of R."""
    if family.cutoff == "none":
        raise InputError(f"{family.name} takes no cutoff (got {text!r}); {known_names()}")
    params: list[int | float] = []
    for part in raw.split(","):
        if family.param == "rank":
            params.append(rank_cutoff(part, repr(text)))
            continue
        params.append(parameter_number(part, f"parameter of {text!r}"))
    return params


def _odd(level: object) -> str:
    """What trec_eval does with a negative, infinite or nan recall level or multiple of R, which it accepts."""
    if isinstance(level, float) and not 0 <= level < math.inf:
        return (
            " (trec_eval accepts it and prints a number that means nothing: iprec_at_recall's value at 0, "
            "Rprec_mult's 0)"
        )
    return ""


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and not isinstance(value, float) else f"{value:g}"


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
