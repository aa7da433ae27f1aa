"""Per-query values of each measure family, computed from the ranked hits of all queries at once.

Each function takes the ``Judged`` hits and a cutoff (None: the whole ranking) and returns one
float per evaluated query. The registry (``registry.py``) names which function computes a family.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ultra_trec.ranking import Hits
from ultra_trec.table import block_starts


class IdealGains:
    """Per-query ideal ranking: all judged grades > 0 of the query, sorted descending.

    ``grade``/``gain`` (grade / log2(rank + 2)) are listed query by query; ``start``/``count``
    locate each query's block (``count`` is the number of documents with a positive gain).
    """

    def __init__(self, query: np.ndarray, grade: np.ndarray, num_queries: int) -> None:
        order = np.lexsort((-grade, query))
        self.query = query[order]
        self.grade = grade[order].astype(np.float64)
        self.rank = np.arange(order.size) - group_first(self.query)
        self.gain = self.grade / np.log2(self.rank + 2.0)
        self.num_queries = num_queries
        self.count = np.bincount(self.query, minlength=num_queries)
        self.start = np.concatenate(([0], np.cumsum(self.count)[:-1])) if num_queries else self.count

    def at(self, k: int | None) -> np.ndarray:
        keep = slice(None) if k is None else self.rank < k
        return np.bincount(self.query[keep], weights=self.gain[keep], minlength=self.num_queries)

    def running(self, values: np.ndarray, query: np.ndarray, position: np.ndarray) -> np.ndarray:
        """The running sum of ``values`` (aligned with the ideal list) of ``query`` up to ``position``
        (0-based, inclusive; past the end: the query's total; < 0 or no ideal document: 0)."""
        total = segment_cumsum(self.query, values)
        count = self.count[query]
        last = np.minimum(position, count - 1)
        ok = (count > 0) & (last >= 0)
        out = np.zeros(query.size)
        out[ok] = total[self.start[query[ok]] + last[ok]]
        return out


@dataclass(frozen=True)
class Judged:
    """The ranked hits (sorted by query, rank) with what the qrels say about them."""

    hits: Hits
    relevant: np.ndarray  # per hit: grade >= relevance_level
    num_rel: np.ndarray  # per query: relevant documents in the qrels
    ideal: IdealGains
    num_queries: int
    relevance_level: int = 1
    num_nonrel: np.ndarray | None = None  # per query: judged with 0 <= grade < relevance_level
    max_grade: np.ndarray | None = None  # per query: the highest judged grade (-1 if none)
    run_id: str = ""  # the run's tag (sixth column of its first line) or its name
    all_judged: bool = False  # whether hits hold every judged document (grades <= 0 included)
    qrels_query: np.ndarray | None = None  # per qrels row: its query index (for gains of any grade)
    qrels_grade: np.ndarray | None = None  # per qrels row: its grade

    @cached_property
    def rel_query(self) -> np.ndarray:
        """Query index of each relevant hit."""
        return self.hits.query[self.relevant]

    @cached_property
    def rel_rank(self) -> np.ndarray:
        """0-based rank of each relevant hit."""
        return self.hits.rank[self.relevant]

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        """Relevant documents retrieved, per query (float)."""
        return np.bincount(self.rel_query, minlength=self.num_queries).astype(np.float64)

    @cached_property
    def precision_from_here(self) -> np.ndarray:
        """Per relevant hit: the best precision at its rank or any deeper relevant rank of its query
        (the interpolated precision; computed once for every recall level)."""
        seen = running_count(self.rel_query)
        return suffix_max(self.rel_query, seen / (self.rel_rank + 1.0))

    @property
    def num_ret(self) -> np.ndarray:
        """Documents retrieved, per query (float)."""
        return self.hits.num_ret.astype(np.float64)

    def require_all_judged(self, what: str) -> None:
        if not self.all_judged:
            raise AssertionError(f"{what} needs every judged document: mark its family needs_judged_nonrelevant")

    def within(self, k: int | None) -> np.ndarray:
        """Which relevant hits rank above the cutoff."""
        return np.ones(self.rel_query.size, dtype=bool) if k is None else self.rel_rank < k

    def per_query(self, mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Sum over the masked relevant hits of each query (their count without weights)."""
        w = None if weights is None else weights[mask]
        return np.bincount(self.rel_query[mask], weights=w, minlength=self.num_queries).astype(np.float64)

    def over_num_rel(self, total: np.ndarray) -> np.ndarray:
        """``total / num_rel`` per query, 0 for a query without relevant documents."""
        return np.divide(total, self.num_rel, out=np.zeros(self.num_queries), where=self.num_rel > 0)


def average_precision(judged: Judged, k: int | None) -> np.ndarray:
    """AP = sum of P@rank over the relevant retrieved documents (ranked <= k at k) / R."""
    seen = running_count(judged.rel_query)  # relevant docs retrieved so far, this one included
    return judged.over_num_rel(judged.per_query(judged.within(k), seen / (judged.rel_rank + 1.0)))


def reciprocal_rank(judged: Judged, k: int | None) -> np.ndarray:
    """1 / rank of each query's first relevant hit; at k, 0 when that hit ranks below k."""
    values = np.zeros(judged.num_queries)
    first = (running_count(judged.rel_query) == 1) & judged.within(k)
    values[judged.rel_query[first]] = 1.0 / (judged.rel_rank[first] + 1.0)
    return values


def precision(judged: Judged, k: int | None) -> np.ndarray:
    """P@k = relevant documents in the top k / k (k, not the number retrieved, as trec_eval)."""
    return judged.per_query(judged.within(k)) / k


def recall(judged: Judged, k: int | None) -> np.ndarray:
    """recall@k = relevant documents in the top k / R (0 for a query without relevant documents)."""
    return judged.over_num_rel(judged.per_query(judged.within(k)))


def success(judged: Judged, k: int | None) -> np.ndarray:
    """success@k = 1 if a relevant document is in the top k, else 0."""
    return (judged.per_query(judged.within(k)) > 0).astype(np.float64)


def hits(judged: Judged, k: int | None) -> np.ndarray:
    """How many relevant documents rank in the top k (ranx's hits; P@k * k)."""
    return judged.per_query(judged.within(k))


def r_precision(judged: Judged, k: int | None) -> np.ndarray:
    """R-prec = relevant documents in the top R / R."""
    return judged.over_num_rel(judged.per_query(judged.rel_rank < judged.num_rel[judged.rel_query]))


def ndcg(judged: Judged, k: int | None) -> np.ndarray:
    """nDCG@k = sum of grade / log2(rank + 1) over the top k / the same over the ideal top k (0 if that is 0)."""
    hits = judged.hits
    gained = hits.grade > 0
    g_query, g_rank = hits.query[gained], hits.rank[gained]
    keep = np.ones(g_query.size, dtype=bool) if k is None else g_rank < k
    dcg_terms = hits.grade[gained][keep] / np.log2(g_rank[keep] + 2.0)
    dcg = np.bincount(g_query[keep], weights=dcg_terms, minlength=judged.num_queries)
    idcg = judged.ideal.at(k)
    return np.divide(dcg, idcg, out=np.zeros(judged.num_queries), where=idcg > 0)


def running_count(query: np.ndarray) -> np.ndarray:
    """1, 2, 3 ... within each run of equal query indices."""
    if query.size == 0:
        return np.zeros(0, dtype=np.float64)
    return (np.arange(query.size) - group_first(query) + 1).astype(np.float64)


def group_first(query: np.ndarray) -> np.ndarray:
    """For each element, the index of the first element of its run of equal query indices."""
    if query.size == 0:
        return np.zeros(0, dtype=np.int64)
    starts = block_starts(query)
    return np.repeat(starts, np.diff(np.append(starts, query.size)))


def segment_cumsum(query: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Running sums of ``values`` restarting at each new query (inclusive)."""
    if query.size == 0:
        return np.zeros(0, dtype=np.float64)
    total = np.cumsum(values, dtype=np.float64)
    before = np.concatenate(([0.0], total))[group_first(query)]
    return total - before


def query_sum(query: np.ndarray, weights: np.ndarray, num_queries: int) -> np.ndarray:
    """Sum of ``weights`` per query index, added in order (float64, also when empty)."""
    return np.bincount(query, weights=weights, minlength=num_queries).astype(np.float64, copy=False)


def count_before(query: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """For each element, how many earlier elements of its query have ``flags`` set (exact integers)."""
    running = segment_cumsum(query, flags.astype(np.float64))
    return running - flags


def suffix_max(query: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each element, the max of it and every later element of the same query (exact)."""
    best = values.copy()
    if best.size == 0:
        return best
    last = group_first(query[::-1])[::-1]  # reversed runs: index (in reversed order) of each run's end
    end = best.size - 1 - last  # the index of the last element of each element's query
    step = 1
    while step < best.size:
        ahead = np.arange(best.size) + step
        ok = ahead <= end
        best[ok] = np.maximum(best[ok], best[ahead[ok]])
        step *= 2
    return best
