"""The registry of retrieval measure families: every measure is declared once, here.

``measures`` parses and prints names from it; the engine computes each family with the function
named here; error messages, tool field descriptions and the docs' table are generated from it.
The order is trec_eval's own (``-m all_trec``), followed by the measures trec_eval lacks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ultra_trec.scoring as scoring
import ultra_trec.scoring_gain as scoring_gain
import ultra_trec.scoring_judged as scoring_judged
import ultra_trec.scoring_sets as scoring_sets
from ultra_base.registry import Registry, Valued, fail

CUTOFF_RULES = ("none", "optional", "required")
PARAMS = ("rank", "fraction")
# What ``name.params`` means for a measure that stays one value (trec_eval's ``-m`` parameters):
# numbers (``11pt_avg.0.2,0.5``), four coefficients (``utility.2,-1,0,0``), gains (``ndcg.1=3,2=9``),
# a persistence (``rbp.p=0.8``).
OPTIONS = ("none", "numbers", "coefficients", "gains", "persistence")
AGGREGATES = ("mean", "geometric", "sum", "text")
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cutoffs


@dataclass(frozen=True)
class Family(Valued):
    """A kind of measure, declared once: everything the parser, engine and documentation need.

    ``trec_name`` / ``trec_cut_name``: trec_eval's name without / with a parameter (``ndcg`` /
    ``ndcg_cut`` in ``ndcg_cut_10``); None where trec_eval has no such measure;
    ``param``: ``rank`` (an integer cutoff k) or ``fraction`` (a recall level, a multiple of R);
    ``defaults``: trec_eval's default parameters, used for a bare name when no ``ks`` apply;
    ``expands_over_ks``: a bare name becomes one measure per k of ``ks``;
    ``needs_judged_nonrelevant``: the measure reads judged documents below the relevance level
    (the ranker then keeps every judged row, which costs a little time);
    ``aggregate``: the summary over queries: mean, geometric (per-query values are logs; the summary
    is exp of their mean), sum (counts), text (per-query strings, no summary);
    ``options``: the kind of trec_eval's parameters of the measure itself (one of OPTIONS), passed to
    ``compute`` instead of a cutoff; ``options_help`` says
    what they mean; ``description``: what the measure is, with its formula (one line: the docs' Definitions, the
    measure's ``description``), and ``citation`` where it comes from;
    ``kind``: ``count`` for a number of things summed over queries (``num_ret``: not a metric, a report
    or comparison may leave it out), ``text`` for per-query strings, else ``continuous``; ``better``:
    every trec_eval measure is higher-is-better.
    """

    name: str
    description: str
    compute: Callable[[scoring.Judged, Any], Any]
    trec_name: str | None = None
    trec_cut_name: str | None = None
    aliases: tuple[str, ...] = ()
    cutoff: str = "none"  # one of CUTOFF_RULES
    param: str = "rank"  # one of PARAMS
    defaults: tuple[float, ...] = ()
    expands_over_ks: bool = False
    needs_judged_nonrelevant: bool = False
    aggregate: str = "mean"  # one of AGGREGATES
    options: str = "none"
    options_help: str = ""
    citation: str = ""
    kind: str = "continuous"
    better: str = "higher"

    def spellings(self) -> list[str]:
        """Every accepted name without cutoff, lower-cased."""
        names = [self.name, self.trec_name, self.trec_cut_name, *self.aliases]
        return list(dict.fromkeys(n.lower() for n in names if n))

    def usage(self) -> list[str]:
        """How the family is written with our names: ``mrr``; ``ndcg``, ``ndcg@k``; ``P@k``."""
        bare = [self.name] if self.cutoff != "required" else []
        return bare + ([f"{self.name}@{'x' if self.param == 'fraction' else 'k'}"] if self.cutoff != "none" else [])

    def trec_names(self) -> list[str]:
        """trec_eval's names: ``ndcg``, ``ndcg_cut_k`` (only the forms trec_eval computes)."""
        bare = [self.trec_name] if self.cutoff != "required" and self.trec_name else []
        suffix = "x" if self.param == "fraction" else "k"
        return bare + ([f"{self.trec_cut_name}_{suffix}"] if self.cutoff != "none" and self.trec_cut_name else [])


# A family summed over queries counts things (num_ret); one printed per query is text (runid).
KIND_OF_AGGREGATE = {"sum": "count", "text": "text"}


def _family(name: str, description: str, compute: Callable[..., Any], **fields: Any) -> Family:
    fields.setdefault("kind", KIND_OF_AGGREGATE.get(fields.get("aggregate", "mean"), "continuous"))
    return Family(name=name, description=description, compute=compute, **fields)


def _check_family(family: Family) -> None:
    """An entry's own rules (the registry checks the enumerations): a bare family does not expand over ks;
    a count is summed."""
    if family.expands_over_ks and family.cutoff == "none":
        raise fail("measure family", family.name, "cutoff", f"{family.cutoff!r} cannot expand over ks")
    for field in ("description", "citation"):
        if not getattr(family, field).strip():
            raise fail("measure family", family.name, field, "is empty: say what the measure is (with its formula) and "
                       "where it comes from")  # fmt: skip
    if (family.kind == "count") != (family.aggregate == "sum"):
        raise fail("measure family", family.name, "kind", f"is {family.kind!r}; a count is summed, and a sum counts")


TREC_EVAL = "trec_eval 10.0 (NIST), usnistgov/trec_eval"
BUCKLEY_VOORHEES = (
    "C. Buckley and E. Voorhees, Retrieval System Evaluation, in TREC: Experiment and Evaluation in IR, MIT Press 2005"
)
BPREF = "C. Buckley and E. Voorhees, Retrieval Evaluation with Incomplete Information, SIGIR 2004"
MOFFAT_ZOBEL = "A. Moffat and J. Zobel, Rank-biased precision for measurement of retrieval effectiveness, ACM TOIS 2008"
_CUT = {"cutoff": "required", "defaults": TREC_CUTOFFS, "expands_over_ks": True}
_LEVELS = {"cutoff": "required", "param": "fraction"}
_JUDGED = {"needs_judged_nonrelevant": True}

# One entry per family, two or three lines each: the registry reads as a table.
# fmt: off
FAMILIES: Registry[Family] = Registry(
    "measure family",
    (
        _family("runid",
                "the run's tag, the sixth column of its first line: text, printed per query", scoring_judged.runid,
                trec_name="runid", aggregate="text",
                citation=TREC_EVAL),
        _family("num_q",
                "number of evaluated queries: 1 per query; summary: the count", scoring_sets.num_q,
                trec_name="num_q", aggregate="sum",
                citation=TREC_EVAL),
        _family("num_ret",
                "documents retrieved for the query (after max_depth); summary: the sum", scoring_sets.num_ret,
                trec_name="num_ret", aggregate="sum",
                citation=TREC_EVAL),
        _family("num_rel",
                ("relevant documents in the qrels, R = documents of the query with grade >= relevance_level; summary: "
                 "the sum"), scoring_sets.num_rel,
                trec_name="num_rel", aggregate="sum",
                citation=TREC_EVAL),
        _family("num_rel_ret",
                "relevant documents retrieved; summary: the sum", scoring_sets.num_rel_ret,
                trec_name="num_rel_ret", aggregate="sum",
                citation=TREC_EVAL),
        _family("map",
                ("mean average precision: AP = sum of P@rank over the relevant retrieved documents / R (at k: only "
                 "those ranked <= k count, still / R)"), scoring.average_precision,
                trec_name="map", trec_cut_name="map_cut", aliases=("AP",), cutoff="optional", defaults=TREC_CUTOFFS,
                citation=BUCKLEY_VOORHEES),
        _family("gm_map",
                "average precision, geometric mean over queries: per query log(max(AP, 0.00001)); summary exp(mean)",
                scoring_sets.gm_map, trec_name="gm_map", aggregate="geometric",
                citation="S. Robertson, On GMAP and other transformations, CIKM 2006"),
        _family("R-prec",
                "precision at rank R: relevant documents in the top R / R (R = relevant documents of the query)",
                scoring.r_precision,
                trec_name="Rprec",
                citation=BUCKLEY_VOORHEES),
        _family("bpref",
                ("binary preference, relevant ranked above judged non-relevant: (1/R) * sum over relevant retrieved of"
                 " 1 - min(n, R) / min(N, R), n: judged non-relevant ranked above, N: judged non-relevant of the query"
                 " (1 when n = 0)"),
                scoring_judged.bpref, trec_name="bpref", **_JUDGED,
                citation=BPREF),
        _family("mrr",
                "reciprocal rank: 1 / rank of the first relevant document, 0 if none (at k: 0 when it ranks below k)",
                scoring.reciprocal_rank, trec_name="recip_rank", aliases=("RR",), cutoff="optional",
                citation="E. Voorhees, The TREC-8 Question Answering Track Report, TREC 1999"),
        _family("iprec_at_recall",
                ("interpolated precision at recall level x (0.0-1.0): max precision at or below the rank where round(x"
                 " * R) relevant documents are retrieved (0 if never)"),
                scoring_sets.interpolated_precision, trec_cut_name="iprec_at_recall", aliases=("IPrec",),
                defaults=scoring_sets.RECALL_LEVELS, **_LEVELS,
                citation=BUCKLEY_VOORHEES),
        _family("P",
                "precision at k: relevant documents in the top k / k", scoring.precision, trec_name="P",
                trec_cut_name="P",
                aliases=("precision",), **_CUT,
                citation=BUCKLEY_VOORHEES),
        _family("relstring",
                "the grades of the first k (10) documents as text: 0-9, > above 9, - outside the pool, . graded < 0",
                scoring_judged.relstring, trec_name="relstring", trec_cut_name="relstring", cutoff="optional",
                aggregate="text", **_JUDGED,
                citation=TREC_EVAL),
        _family("recall",
                "recall at k: relevant documents in the top k / R", scoring.recall, trec_name="recall",
                trec_cut_name="recall", aliases=("R",), **_CUT,
                citation=BUCKLEY_VOORHEES),
        _family("unj",
                ("share of the top k absent from the qrels or graded < 0: (min(k, retrieved) - judged documents in the"
                 " top k) / k"), scoring_judged.unjudged,
                trec_name="unj", trec_cut_name="unj", **{**_CUT, "defaults": (5, 10, 20)}, **_JUDGED,
                citation=TREC_EVAL),
        _family("rbp",
                ("rank-biased precision, p = 0.9: (1 - p) * sum over ranks i of gain_i * p^(i-1), gains divided by the"
                 " query's top grade when > 1"), scoring_gain.rank_biased_precision,
                trec_name="rbp", options="persistence", options_help="rbp.p=0.8: persistence p",
                citation=MOFFAT_ZOBEL),
        _family("rbp_resid",
                ("rbp's residual, the mass left to unjudged documents: p^n + (1 - p) * sum of p^(i-1) over unjudged "
                 "ranks i (0 when every document is judged)"), scoring_judged.rbp_residual,
                trec_name="rbp_resid", options="persistence", options_help="rbp_resid.p=0.8: persistence p",
                **_JUDGED,
                citation=MOFFAT_ZOBEL),
        _family("infAP",
                ("inferred average precision: (1/R) * sum over relevant retrieved of 1/j + ((j-1)/j) * (judged above /"
                 " (j-1)) * (rel above + e) / (rel above + nonrel above + 2e), j its rank"),
                scoring_judged.inferred_ap, trec_name="infAP",
                **_JUDGED,
                citation=("E. Yilmaz and J. Aslam, Estimating Average Precision with Incomplete and Imperfect "
                          "Judgments, CIKM 2006")),
        _family("gm_bpref",
                "bpref, geometric mean over queries: per query log(max(bpref, 0.00001)); summary exp(mean)",
                scoring_judged.gm_bpref, trec_name="gm_bpref", aggregate="geometric", **_JUDGED,
                citation=BPREF),
        _family("utility",
                ("a * rel_ret + b * (ret - rel_ret) + c * (R - rel_ret) + d * (rel_ret - ret - R); trec_eval's default"
                 " coefficients 1, -1, 0, 0 give relevant retrieved - non-relevant retrieved"),
                scoring_sets.utility, trec_name="utility", options="coefficients",
                options_help="utility.a,b,c,d: a*rel_ret + b*nonrel_ret + c*rel_missed + d*(rel_ret - ret - R)",
                citation="D. Hull and S. Robertson, The TREC-8 Filtering Track Final Report, TREC 1999"),
        _family("11pt_avg",
                ("interpolated precision (iprec_at_recall) averaged over the recall levels 0.0, 0.1, ..., 1.0 (or "
                 "those given)"),
                scoring_sets.eleven_point_average, trec_name="11pt_avg", options="numbers",
                options_help="11pt_avg.0.2,0.5,0.8: the recall levels averaged",
                citation=BUCKLEY_VOORHEES),
        _family("ndcg",
                ("nDCG = DCG / ideal DCG, DCG = sum of gain / log2(rank + 1), gain = the grade (linear) or the given "
                 "gain map"), scoring_gain.ndcg,
                trec_name="ndcg",
                trec_cut_name="ndcg_cut", aliases=("nDCG",), cutoff="optional", defaults=TREC_CUTOFFS,
                expands_over_ks=True, options="gains",
                options_help="ndcg.1=3,2=9: gain of each grade (other grades: the grade; whole ranking only)",
                citation=("K. Jarvelin and J. Kekalainen, Cumulated gain-based evaluation of IR techniques, ACM TOIS "
                          "2002")),
        _family("relative_P",
                "relevant documents in the top k / min(k, R)", scoring_sets.relative_precision,
                trec_name="relative_P", trec_cut_name="relative_P", **_CUT,
                citation=TREC_EVAL),
        _family("Rprec_mult",
                ("precision at rank x * R, rounded as trec_eval does: relevant in the top floor(x * R + 0.9) / that "
                 "rank (0 when it is 0)"), scoring_sets.r_precision_multiple,
                trec_name="Rprec_mult", trec_cut_name="Rprec_mult",
                defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), **_LEVELS,
                citation=TREC_EVAL),
        _family("success",
                "1 if a relevant document is in the top k, else 0", scoring.success, trec_name="success",
                trec_cut_name="success", aliases=("hit_rate",), **{**_CUT, "defaults": (1, 5, 10)},
                citation=TREC_EVAL),
        _family("ndcg_rel",
                ("nDCG averaged over the documents with a positive grade, each at its rank (at the end if not "
                 "retrieved)"), scoring_gain.ndcg_rel,
                trec_name="ndcg_rel",
                citation=TREC_EVAL),
        _family("Rndcg",
                "nDCG averaged at the ranks where the ideal gain drops (R levels), plus the end of a longer ranking",
                scoring_gain.r_ndcg,
                trec_name="Rndcg",
                citation=TREC_EVAL),
        _family("binG",
                "binary G: (1/R) * sum over relevant retrieved of 1 / log2(2 + non-relevant ranked above)",
                scoring_sets.binary_g,
                trec_name="binG",
                citation=TREC_EVAL),
        _family("G",
                ("normalised gain G, trec_eval's experimental measure mixing MAP and nDCG: sum of gain / log2(2 + "
                 "ideal gain so far - gain so far) over retrieved documents / ideal total gain"),
                scoring_gain.normalised_gain, trec_name="G",
                citation=TREC_EVAL),
        _family("set_P",
                "precision of the whole ranking: relevant retrieved / retrieved", scoring_sets.set_precision,
                trec_name="set_P",
                citation=TREC_EVAL),
        _family("set_recall",
                "recall of the whole ranking: relevant retrieved / R", scoring_sets.set_recall,
                trec_name="set_recall",
                citation=TREC_EVAL),
        _family("set_relative_P",
                "relevant retrieved / min(retrieved, R)", scoring_sets.set_relative_precision,
                trec_name="set_relative_P",
                citation=TREC_EVAL),
        _family("set_map",
                "set_P * set_recall: relevant retrieved^2 / (retrieved * R)", scoring_sets.set_map, trec_name="set_map",
                citation=TREC_EVAL),
        _family("set_F",
                ("F-measure of the whole ranking's precision P (set_P) and recall R (set_recall): (beta + 1) * P * R /"
                 " (beta * P + R), beta = 1 by default (F1)"), scoring_sets.set_f, trec_name="set_F",
                aliases=("f1",), options="numbers", options_help="set_F.0.5: beta, the weight of recall (first number)",
                citation="C. J. van Rijsbergen, Information Retrieval, Butterworths 1979"),
        _family("num_nonrel_judged_ret",
                "retrieved documents judged non-relevant (0 <= grade < relevance_level); summary: the sum",
                scoring_judged.num_nonrel_judged_ret, trec_name="num_nonrel_judged_ret", aggregate="sum", **_JUDGED,
                citation=TREC_EVAL),
        _family("hits",
                "relevant documents in the top k, a count (ranx's hits: P@k * k)", scoring.hits, **_CUT,
                citation=("E. Bassani, ranx: A Blazing-Fast Python Library for Ranking Evaluation and Comparison, ECIR"
                          " 2022")),
        _family("Judged",
                ("share of the top k present in the qrels (ir_measures' Judged@k): judged documents of the top k / "
                 "min(k, retrieved)"),
                scoring_judged.judged_share, **_CUT, **_JUDGED,
                citation=("S. MacAvaney, C. Macdonald and I. Ounis, Streamlining Evaluation with ir-measures, ECIR "
                          "2022")),
    ),
    choices={"cutoff": CUTOFF_RULES, "param": PARAMS, "aggregate": AGGREGATES, "options": OPTIONS},
    check=_check_family,
)

# trec_eval's measure lists (``-m official``, ``-m all_trec``, ``-m set``), in its printing order.
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": tuple(f.trec_cut_name if f.trec_name is None else f.trec_name
                      for f in FAMILIES.values() if f.trec_name or f.trec_cut_name) + ("map_cut", "ndcg_cut"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}
# fmt: on
# trec_eval's table of measures (``measures.c``): the order it computes and prints them, whatever the
# order of its -m options.
TREC_EVAL_ORDER = (
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
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "rbp",
    "rbp_resid",
    "unj",
)
# ranx / ir_measures spellings that mean the whole ranking when written without a cutoff.
WHOLE_RANKING = {"precision": "set_P", "recall": "set_recall", "r": "set_recall"}


def check_registry() -> None:
    """Each spelling names one family (trec_eval's names, aliases, lower-cased; checked once, at import)."""
    owners: dict[str, str] = {}
    for family in FAMILIES.values():
        for spelling in family.spellings():
            if owners.setdefault(spelling, family.name) != family.name:
                raise fail(
                    "measure family", family.name, "aliases", f"spelling {spelling!r} also names {owners[spelling]}"
                )
    trec = {n for f in FAMILIES.values() for n in (f.trec_name, f.trec_cut_name) if n}
    if set(TREC_EVAL_ORDER) != trec:
        raise AssertionError(f"TREC_EVAL_ORDER must list each trec_eval name: {sorted(trec ^ set(TREC_EVAL_ORDER))}")
    for nickname in NICKNAMES:
        if nickname in owners:
            raise AssertionError(f"nickname {nickname!r} is also a measure name")


check_registry()
