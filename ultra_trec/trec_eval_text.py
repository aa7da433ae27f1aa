"""trec_eval's own command line on top of the engine: its ``-m`` options and its printed report.

``measures_from_options(["all_trec", "P.5,7,3"])`` reads ``-m`` options as trec_eval 10.0 does: a
trec_eval name or nickname, optionally followed by ``.params``; the first parameters given for a name
win; cutoffs (``P.5,7``) and recall levels (``iprec_at_recall..1,.5``) are sorted and must be distinct;
``ndcg.1=3,2=9``, ``utility.2,-1,0,0``, ``11pt_avg..25,.5``, ``set_F.0.5``, ``rbp.p=0.8`` are one
measure each, named ``<name>_<params as typed>``. ``report_text(result, ...)`` prints the values
with trec_eval's layout: ``%-22s\\t%s\\t%6.4f`` (counts as integers), the queries of ``-q`` first,
then the ``all`` lines, in trec_eval's measure order (``TREC_EVAL_ORDER``), summed query by query
in qrels order as its C code does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from ultra_base.errors import InputError
from ultra_trec.c_numbers import parameter_number, rank_cutoff
from ultra_trec.engine import TrecResult
from ultra_trec.measures import Measure, parse_options
from ultra_trec.registry import FAMILIES, NICKNAMES, TREC_EVAL_ORDER, Family
from ultra_trec.scoring_sets import RECALL_LEVELS, recall_cutoff

_BARE: dict[str, Family] = {f.trec_name: f for f in FAMILIES.values() if f.trec_name}
_CUT: dict[str, Family] = {f.trec_cut_name: f for f in FAMILIES.values() if f.trec_cut_name}
_RANK = {name: i for i, name in enumerate(TREC_EVAL_ORDER)}


def trec_eval_names() -> str:
    """The measure names and nicknames ``-m`` accepts, for error messages."""
    return f"trec_eval measures: {', '.join(TREC_EVAL_ORDER)}; nicknames: {', '.join(NICKNAMES)}"


def measures_from_options(options: Sequence[str]) -> list[Measure]:
    """The measures named by trec_eval ``-m`` options (``official`` when there are none), in its order."""
    marked: dict[str, None] = {}
    params: dict[str, str] = {}
    for option in options or ["official"]:
        name, dot, text = option.partition(".")
        if dot and not text:
            raise InputError(f"-m {option}: nothing after '.'; give parameters (e.g. P.5,10) or drop the '.'")
        if name in NICKNAMES:
            marked.update(dict.fromkeys(NICKNAMES[name]))
            continue
        if name not in _RANK:
            raise InputError(f"-m {option}: unknown measure {name!r}; {trec_eval_names()}")
        marked[name] = None
        if dot:
            params.setdefault(name, text)  # trec_eval keeps the first parameters given for a measure
    measures: list[Measure] = []
    for name in sorted(marked, key=_RANK.__getitem__):
        measures.extend(_measures_of(name, params.get(name)))
    return measures


def _measures_of(name: str, text: str | None) -> list[Measure]:
    """The measures one trec_eval name stands for, with its parameters if any."""
    cut = _CUT.get(name)
    bare = _BARE.get(name)
    if cut is not None and (bare is None or cut.cutoff == "required" or text is not None):
        if text is None:
            return [Measure(cut.name, k) for k in cut.defaults]
        return [Measure(cut.name, k) for k in _cutoffs(cut, name, text)]
    assert bare is not None
    if text is None:
        return [Measure(bare.name)]
    if bare.options == "none":
        raise InputError(f"-m {name}.{text}: {name} takes no parameters; {trec_eval_names()}")
    return [Measure(bare.name, options=text)]


def _cutoffs(family: Family, name: str, text: str) -> list[int | float]:
    """Sorted distinct cutoffs (positive integers: trec_eval's ``23.4``, read by C's atol as 23, is refused)
    or recall levels / multiples of R (``abc``, read by C's atof as 0, is refused: see ``c_numbers``)."""
    values: list[int | float] = []
    for part in text.split(","):
        if family.param == "rank":
            values.append(rank_cutoff(part, f"-m {name}.{text}"))
        else:
            values.append(parameter_number(part, f"-m {name}.{text}"))
    values.sort()
    if len(set(values)) != len(values):
        raise InputError(f"-m {name}.{text}: a cutoff is given twice; give each once")
    return values


def report_text(
    result: TrecResult,
    measures: Iterable[Measure],
    *,
    queries: Sequence[str],
    per_query: bool,
    summary: bool,
    missing: Iterable[str] = (),
    num_rel_all: int | None = None,
    judged_only: bool = False,
) -> str:
    """trec_eval's printed report of ``result`` over ``queries`` (in qrels order): with ``per_query`` (``-q``)
    one line per query and measure first, then unless ``summary`` is false (``-n``) the ``all`` lines.

    ``missing``: queries absent from the run (scored with ``-c``); ``num_rel_all``: the summary of
    num_rel under ``-c``, which trec_eval counts afresh from the qrels (grades > 0, whatever ``-l``);
    ``judged_only``: ``-J`` was given (it also empties the one-document ranking of a missing query).
    """
    measures = list(measures)
    index = {qid: i for i, qid in enumerate(result.qids)}
    rows = np.asarray([index[q] for q in queries], dtype=np.int64)
    gone = np.asarray([] if judged_only else [index[q] for q in missing], dtype=np.int64)
    columns = _columns(result, measures, gone)
    lines: list[str] = []
    if per_query:
        for position, qid in enumerate(queries):
            for measure in measures:
                if measure.family in ("runid", "num_q") or measure.aggregate == "geometric":
                    continue  # trec_eval prints these only in the summary
                value = columns[measure.name][rows[position]]
                lines.append(_line(measure, qid, f"'{value}'" if measure.aggregate == "text" else float(value)))
    if summary:
        for measure in measures:
            if measure.family == "num_rel" and num_rel_all is not None:
                lines.append(_line(measure, "all", float(num_rel_all)))
            elif measure.family != "relstring":  # per query only
                lines.append(_line(measure, "all", _summary_value(result, measure, columns, rows)))
    return "".join(lines)


def _columns(result: TrecResult, measures: list[Measure], missing: np.ndarray) -> dict[str, np.ndarray | list[str]]:
    """Per-query values by measure name. trec_eval scores a query missing from the run (``-c``) on a
    one-document ranking of an unjudged document, then zeroes the measures named utility, relstring,
    rbp_resid: under their parameterised names (``utility_2,-1,0,0``) it does not, and prints that
    ranking's values, reproduced here."""
    columns: dict[str, np.ndarray | list[str]] = {**result.values, **result.text}
    _empty_rankings(result, measures, missing, columns)
    for measure in measures:
        if measure.options is None and measure.k is None or not missing.size:
            continue
        if measure.family == "relstring":
            gone = set(missing.tolist())
            columns[measure.name] = ["-" if i in gone else v for i, v in enumerate(result.text[measure.name])]
        elif measure.family in ("utility", "rbp_resid") and measure.options is not None:
            column = result.values[measure.name].copy()
            if measure.family == "rbp_resid":
                p = parse_options(FAMILIES["rbp_resid"], measure.options)
                column[missing] = p + (1.0 - p) * 1.0
            else:
                a, b, c, d = parse_options(FAMILIES["utility"], measure.options)
                num_rel = result.num_rel[missing].astype(np.float64)
                column[missing] = a * 0.0 + b * 1.0 + c * num_rel + d * (0.0 + 0.0 - 1.0 - num_rel)
            columns[measure.name] = column
    return columns


def _empty_rankings(result: TrecResult, measures: list[Measure], missing: np.ndarray, columns: dict) -> None:
    """A query left with no document (``-J``; without it, a missing query keeps its one document):
    trec_eval's interpolated precision divides 0 by 0 there, so ``iprec_at_recall`` at a level that
    rounds to 0 relevant documents, and ``11pt_avg`` when a level does, are NaN (printed ``-nan``)."""
    empty = result.num_ret == 0
    empty[missing] = False
    if not empty.any():
        return
    num_rel = result.num_rel.astype(np.float64)
    for measure in measures:
        if measure.family == "iprec_at_recall":
            nan = empty & (recall_cutoff(measure.k, num_rel) == 0)
        elif measure.family == "11pt_avg":
            levels = RECALL_LEVELS if measure.options is None else parse_options(FAMILIES["11pt_avg"], measure.options)
            nan = empty & np.any([recall_cutoff(level, num_rel) <= 0 for level in levels], axis=0)
        else:
            continue
        columns[measure.name] = np.where(nan, np.nan, columns[measure.name])


def _summary_value(result: TrecResult, measure: Measure, columns: dict, rows: np.ndarray) -> float | str:
    """The ``all`` value: the run's tag, the query count, or trec_eval's sum over queries in order (then
    divided by the count, or exp of that for a geometric mean)."""
    if measure.family == "runid":
        return result.text[measure.name][0] if len(result.qids) else ""
    if measure.family == "num_q":
        return float(len(rows))
    column = np.asarray(columns[measure.name])[rows]
    total = float(np.cumsum(column)[-1]) if column.size else 0.0  # cumsum adds in order, as C does
    if measure.aggregate == "sum" or not rows.size:
        return total
    if measure.aggregate == "geometric":
        return math.exp(total / rows.size)
    return total / rows.size


def _line(measure: Measure, qid: str, value: float | str) -> str:
    name = measure.trec_name
    if isinstance(value, str):
        return f"{name:<22}\t{qid}\t{value}\n"
    if measure.aggregate == "sum":
        return f"{name:<22}\t{qid}\t{int(value)}\n"
    if math.isnan(value):
        return f"{name:<22}\t{qid}\t{'-nan':>6}\n"  # C's 0.0 / 0.0 carries the sign bit
    return f"{name:<22}\t{qid}\t{value:6.4f}\n"
