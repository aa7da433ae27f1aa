"""Retrieval evaluation with trec_eval 10.0 semantics, as a pure, importable API.

    from ultra_trec.engine import evaluate
    result = evaluate("qrels.test", "results.test", ["map", "ndcg@10", "P@5"])
    result.aggregate      # {"map": 0.1785, "ndcg@10": ..., "P@5": 0.2667}
    result.per_query      # {"301": {"map": 0.0324, ...}, ...}
    result.counts         # {"num_q": 3, "num_ret": 1500, "num_rel": 561, "num_rel_ret": 131, ...}

Runs and qrels may be file paths or in-memory mappings (``{qid: {docid: score}}``, a run also
``{qid: [docid, ...]}`` in rank order; ``{qid: {docid: grade}}`` for qrels). Semantics (see
docs/metrics.md, "Retrieval"): the evaluated set is the qrels queries; a qrels query missing from the
run scores 0 on every measure and counts in the mean (trec_eval ``-c``); run queries absent from
the qrels are ignored; both are counted. Values are full-precision floats.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ultra_base.errors import InputError
from ultra_trec.measures import Measure, parse_measures
from ultra_trec.ranking import Hits, rank_hits
from ultra_trec.reading.sources import load_qrels, load_run
from ultra_trec.scoring import IdealGains, Judged, running_count
from ultra_trec.table import TrecTable

RunLike = str | os.PathLike[str] | Mapping[str, Any] | TrecTable
QrelsLike = str | os.PathLike[str] | Mapping[str, Mapping[str, int]] | TrecTable


@dataclass(frozen=True)
class TrecResult:
    """Per-query values of each measure over the evaluated query set, plus counts.

    ``values[name]`` is aligned with ``qids`` (sorted in byte order); ``aggregate`` summarises each
    measure as its family says (mean; geometric mean for gm_map/gm_bpref; sum for counts).
    ``text`` holds the per-query strings of ``runid`` and ``relstring``.
    """

    measures: tuple[Measure, ...]
    qids: tuple[str, ...]
    values: dict[str, np.ndarray]
    num_ret: np.ndarray
    num_rel: np.ndarray
    num_rel_ret: np.ndarray
    queries_missing_in_run: int
    queries_only_in_run: int
    relevance_level: int = 1
    max_depth: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    text: dict[str, list[str]] = field(default_factory=dict)

    @property
    def aggregate(self) -> dict[str, float]:
        """Each measure over the evaluated queries (``{"ndcg@10": 0.3016, ...}``): the mean, or the
        summary its family declares (exp of the mean log for gm_map, the sum for num_rel ...)."""
        kinds = {m.name: m.aggregate for m in self.measures}
        return {name: _summary(column, kinds.get(name, "mean")) for name, column in self.values.items()}

    @property
    def counts(self) -> dict[str, int]:
        """trec_eval's counts summed over queries, and how many queries were filled or ignored."""
        return {
            "num_q": len(self.qids),
            "num_ret": int(self.num_ret.sum()),
            "num_rel": int(self.num_rel.sum()),
            "num_rel_ret": int(self.num_rel_ret.sum()),
            "queries_missing_in_run": self.queries_missing_in_run,
            "queries_only_in_run": self.queries_only_in_run,
        }

    @property
    def kinds(self) -> dict[str, str]:
        """What each per-query value is, from the registry (``metric_kinds`` of the result file): ``count`` for
        ``num_ret``, ``num_rel``, ``num_rel_ret`` and ``num_q`` (numbers of things, never compared as metrics)."""
        from ultra_trec.registry import FAMILIES

        kinds = {m.name: FAMILIES[m.family].kind for m in self.measures}
        return {**kinds, **{name: FAMILIES[name].kind for name in ("num_ret", "num_rel", "num_rel_ret")}}

    @property
    def per_query(self) -> dict[str, dict[str, float]]:
        """``{qid: {measure: value, "num_ret": n, "num_rel": n, "num_rel_ret": n}}``."""
        columns = {name: column.tolist() for name, column in self.values.items()}
        counts = {
            "num_ret": self.num_ret.tolist(),
            "num_rel": self.num_rel.tolist(),
            "num_rel_ret": self.num_rel_ret.tolist(),
        }
        columns.update(self.text)
        columns.update(counts)
        names = list(columns)
        rows = zip(*columns.values(), strict=True)
        return {qid: dict(zip(names, row, strict=True)) for qid, row in zip(self.qids, rows, strict=True)}

    def renamed(self, names: str) -> TrecResult:
        """The same result keyed by ``names``: ``ultrarag`` (ours, ``P@5``) or ``trec_eval`` (``P_5``)."""
        if names == "ultrarag":
            return self
        if names != "trec_eval":
            raise InputError(f"names must be 'ultrarag' or 'trec_eval', got {names!r}")
        key = {m.name: m.trec_name for m in self.measures}
        values = {key.get(n, n): v for n, v in self.values.items()}
        text = {key.get(n, n): v for n, v in self.text.items()}
        return dataclasses.replace(self, values=values, text=text, measures=tuple(_Renamed(m) for m in self.measures))

    def column(self, measure: str | Measure) -> np.ndarray:
        """Per-query values of one measure, aligned with ``qids``."""
        name = measure.name if isinstance(measure, Measure) else measure
        if name not in self.values:
            raise InputError(f"measure {name!r} was not evaluated; evaluated: {', '.join(self.values)}")
        return self.values[name]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: aggregate, per_query, counts and settings."""
        return {
            "aggregate": self.aggregate,
            "per_query": self.per_query,
            "counts": self.counts,
            "settings": {
                "measures": [m.name for m in self.measures],
                **({"runid": self.text["runid"][0]} if self.text.get("runid") else {}),
                "relevance_level": self.relevance_level,
                "max_depth": self.max_depth,
                "metric_kinds": self.kinds,
                **self.settings,
            },
        }


def evaluate(
    qrels: QrelsLike,
    run: RunLike,
    measures: str | Sequence[str | Measure],
    *,
    ks: Sequence[int] | None = None,
    relevance_level: int = 1,
    max_depth: int | None = None,
) -> TrecResult:
    """Score ``run`` against ``qrels`` exactly as trec_eval 10.0 (``-c``) does.

    ``measures`` are names such as ``map``, ``mrr``, ``mrr@10``, ``P@5``, ``recall@100``,
    ``ndcg@10``, ``ndcg``, ``success@1``, ``hits@10``, ``map@10``, ``R-prec`` (the registry in
    ``registry.py`` lists them all); bare ``precision``/``recall``/``ndcg``/``success``/``hits``
    expand over ``ks``. A document is relevant when its grade >= ``relevance_level``;
    nDCG gains are the grades (> 0) whatever the level. ``max_depth`` cuts each ranking (``-M``).
    """
    parsed = parse_measures(measures, ks)
    level = _check_int(relevance_level, "relevance_level", minimum=0)
    depth = None if max_depth is None else _check_int(max_depth, "max_depth", minimum=1)
    qrels_table = load_qrels(qrels)
    run_table = load_run(run)
    return evaluate_tables(qrels_table, run_table, parsed, relevance_level=level, max_depth=depth)


def evaluate_tables(
    qrels: TrecTable,
    run: TrecTable,
    measures: Sequence[Measure],
    *,
    relevance_level: int = 1,
    max_depth: int | None = None,
    judged_only: bool = False,
) -> TrecResult:
    """``evaluate`` on tables already read (reuse one qrels table for several runs).

    ``judged_only`` (trec_eval ``-J``) drops every retrieved document without a grade >= 0 in the
    qrels before scoring, after ``max_depth`` cut the ranking, and ranks the rest 1, 2, 3 ...
    """
    qids = tuple(sorted(qrels.qids, key=lambda q: q.encode("utf-8", "surrogateescape")))
    index = {qid: i for i, qid in enumerate(qids)}
    qrels_query = np.asarray([index[q] for q in qrels.qids], dtype=np.int32)[qrels.qid_codes]
    run_map = np.asarray([index.get(q, -1) for q in run.qids], dtype=np.int32)
    only_in_run = int(np.count_nonzero(run_map < 0))
    if only_in_run == len(run.qids):
        raise InputError(
            f"the run has no query in common with the qrels ({qrels.source}); "
            f"run queries look like {run.qids[:3]}, qrels queries like {list(qids[:3])}",
            path=run.source,
        )
    run_query = run_map[run.qid_codes]
    all_judged = judged_only or any(m.needs_judged_nonrelevant for m in measures)
    hits = rank_hits(
        run,
        run_query,
        qrels,
        qrels_query,
        len(qids),
        relevance_level=relevance_level,
        max_depth=max_depth,
        keep_all_judged=all_judged,
    )
    if judged_only:
        hits = _judged_hits(hits, len(qids))
    grades = qrels.values
    num_rel = np.bincount(qrels_query[grades >= relevance_level], minlength=len(qids)).astype(np.int64)
    nonrel = (grades >= 0) & (grades < relevance_level)
    relevant = hits.grade >= relevance_level
    num_rel_ret = np.bincount(hits.query[relevant], minlength=len(qids)).astype(np.int64)
    ideal = IdealGains(qrels_query[grades > 0], grades[grades > 0], len(qids))
    max_grade = np.full(len(qids), -1, dtype=np.int64)
    np.maximum.at(max_grade, qrels_query, grades)
    judged = Judged(
        hits,
        relevant,
        num_rel,
        ideal,
        len(qids),
        relevance_level=relevance_level,
        num_nonrel=np.bincount(qrels_query[nonrel], minlength=len(qids)),
        max_grade=max_grade,
        run_id=run_tag(run) if any(m.family == "runid" for m in measures) else "",
        all_judged=all_judged,
        qrels_query=qrels_query,
        qrels_grade=grades,
    )
    values: dict[str, np.ndarray] = {}
    text: dict[str, list[str]] = {}
    for m in measures:
        column = m.compute(judged)
        if m.aggregate == "text":
            text[m.name] = [str(v) for v in column]
        else:
            values[m.name] = column
    return TrecResult(
        measures=tuple(measures),
        qids=qids,
        values=values,
        text=text,
        num_ret=hits.num_ret,
        num_rel=num_rel,
        num_rel_ret=num_rel_ret,
        queries_missing_in_run=int(np.count_nonzero(hits.num_ret == 0)),
        queries_only_in_run=only_in_run,
        relevance_level=relevance_level,
        max_depth=max_depth,
        settings={"qrels": qrels.source, "run": run.source},
    )


def run_tag(run: TrecTable) -> str:
    """trec_eval's runid: the sixth column of the run's first line (a mapping's name)."""
    if run.path is None:
        return run.source
    with open(run.path, "rb") as handle:
        for raw in handle:
            fields = raw.split()
            if fields and not fields[0].startswith(b"#"):
                return fields[5].decode("utf-8", "replace") if len(fields) > 5 else ""
    return ""


def _judged_hits(hits: Hits, num_queries: int) -> Hits:
    """The hits with a grade >= 0, ranked again from 0 within each query; num_ret counts them (``-J``)."""
    keep = hits.grade >= 0
    query = hits.query[keep]
    rank = (running_count(query) - 1).astype(np.int64)
    return Hits(query=query, rank=rank, grade=hits.grade[keep], num_ret=np.bincount(query, minlength=num_queries))


def _summary(column: np.ndarray, kind: str) -> float:
    if column.size == 0:
        return 0.0
    if kind == "geometric":
        return float(np.exp(column.mean()))
    if kind == "sum":
        return float(column.sum())
    return float(column.mean())


@dataclass(frozen=True)
class _Renamed:
    """A measure shown under its trec_eval name (``TrecResult.renamed``)."""

    measure: Measure

    @property
    def name(self) -> str:
        return self.measure.trec_name

    @property
    def aggregate(self) -> str:
        return self.measure.aggregate

    @property
    def family(self) -> str:
        return self.measure.family


def _check_int(value: Any, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)
