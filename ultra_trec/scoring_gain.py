"""Per-query values of trec_eval's graded measures beyond nDCG: G, ndcg_rel, Rndcg and rbp.

Gains are the grades (> 0), as in trec_eval without gain parameters; the ideal ranking is every
judged document of the query sorted by grade (``IdealGains``). Formulas follow trec_eval 10.0
(``m_G.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c``, ``m_rbp.c``), including where their loops stop.
"""

from __future__ import annotations

import numpy as np

import ultra_trec.scoring as scoring
from ultra_trec.scoring import IdealGains, Judged, query_sum, segment_cumsum
from ultra_trec.scoring_judged import RBP_PERSISTENCE


def _gained(judged: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query, 0-based rank and grade of the retrieved documents with a positive grade."""
    hits = judged.hits
    keep = hits.grade > 0
    return hits.query[keep], hits.rank[keep], hits.grade[keep].astype(np.float64)


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    return np.divide(top, bottom, out=np.zeros(top.shape), where=bottom > 0)


def normalised_gain(judged: Judged, k: None) -> np.ndarray:
    """G: each gained document adds gain / log2(2 + ideal cost so far - gain so far), over the ideal total.

    The ideal cost at rank i sums max(ideal gain, 1) over the ideal ranking's first i + 1 places.
    """
    query, rank, grade = _gained(judged)
    ideal = judged.ideal
    so_far = segment_cumsum(query, grade)
    beyond = np.maximum(0, rank + 1 - ideal.count[query])
    cost = ideal.running(ideal.grade, query, rank) + beyond
    terms = grade / np.log2(2.0 + cost - so_far)
    total = query_sum(ideal.query, ideal.grade, judged.num_queries)
    return _ratio(query_sum(query, terms, judged.num_queries), total)


def ndcg_rel(judged: Judged, k: None) -> np.ndarray:
    """nDCG averaged over the documents with a positive grade: at each retrieved one, and for each
    one not retrieved, nDCG at the end of the ranking."""
    query, rank, grade = _gained(judged)
    ideal = judged.ideal
    terms = grade / np.log2(rank + 2.0)
    dcg = segment_cumsum(query, terms)
    idcg = ideal.running(ideal.gain, query, rank)
    total = query_sum(query, dcg / idcg, judged.num_queries)
    final = _ratio(query_sum(query, terms, judged.num_queries), ideal.at(None))
    missing = ideal.count - np.bincount(query, minlength=judged.num_queries)
    total = total + missing * final
    out = np.zeros(judged.num_queries)
    positive = total > 0
    out[positive] = total[positive] / ideal.count[positive]
    return out


def r_ndcg(judged: Judged, k: None) -> np.ndarray:
    """nDCG averaged over the ranks where the ideal gain drops (the R levels), plus the end of the
    ranking when it runs at least two documents past the last positive ideal one (trec_eval's loop)."""
    query, rank, grade = _gained(judged)
    ideal = judged.ideal
    n = judged.num_queries
    level_end = np.ones(ideal.query.size, dtype=bool)
    level_end[:-1] = (ideal.query[1:] != ideal.query[:-1]) | (ideal.grade[1:] != ideal.grade[:-1])
    point_query, point_rank = ideal.query[level_end], ideal.rank[level_end] + 1
    dcg_terms = grade / np.log2(rank + 2.0)
    dcg = _running_at(query, rank, segment_cumsum(query, dcg_terms), point_query, point_rank)
    idcg = ideal.running(ideal.gain, point_query, point_rank - 1)
    total = query_sum(point_query, dcg / idcg, n)
    count = np.bincount(point_query, minlength=n).astype(np.float64)
    extra = (ideal.count + 1 < judged.hits.num_ret) & (ideal.count > 0)
    final = query_sum(query, dcg_terms, n)
    total[extra] += final[extra] / ideal.at(None)[extra]
    count[extra] += 1
    return np.where(judged.num_rel > 0, _ratio(total, count), 0.0)


def rank_biased_precision(judged: Judged, p: float | None) -> np.ndarray:
    """rbp = (1 - p) * sum of gain * p^rank (p = 0.9 unless given); gains are grade / max grade of the
    query when that exceeds 1 (trec_eval normalises gains to [0, 1])."""
    query, rank, grade = _gained(judged)
    top = judged.max_grade[query].astype(np.float64)
    gain = np.where(top > 1, grade / np.maximum(top, 1.0), grade)
    p = RBP_PERSISTENCE if p is None else p
    return (1.0 - p) * query_sum(query, gain * p**rank, judged.num_queries)


def ndcg(judged: Judged, k: int | dict[int, float] | None) -> np.ndarray:
    """nDCG at cutoff k (``scoring.ndcg``), or over the whole ranking with a gain per grade: ``{grade: gain}``."""
    return scoring.ndcg(judged, k) if not isinstance(k, dict) else ndcg_with_gains(judged, k)


def ndcg_with_gains(judged: Judged, gains: dict[int, float]) -> np.ndarray:
    """trec_eval's ``ndcg.1=3,2=9``: DCG = sum of gain(grade) / log2(rank + 1) over the ranking; the ideal
    ranks every judged document (grade >= 0) by gain, keeping positive gains. Unlisted grades >= 0 gain
    their grade, unlisted negative ones 0; 0 for a query whose ideal DCG is 0."""
    judged.require_all_judged("ndcg with gains")
    n = judged.num_queries
    hits = judged.hits
    gain = _mapped(hits.grade, gains)
    some = gain != 0
    dcg = query_sum(hits.query[some], gain[some] / np.log2(hits.rank[some] + 2.0), n)
    grade = judged.qrels_grade
    rows = grade >= 0
    ideal_gain = _mapped(grade[rows], gains)
    positive = ideal_gain > 0
    idcg = IdealGains(judged.qrels_query[rows][positive], ideal_gain[positive], n).at(None)
    return _ratio(dcg, idcg)


def _mapped(grade: np.ndarray, gains: dict[int, float]) -> np.ndarray:
    """The gain of each grade: as listed, else the grade itself (0 when negative)."""
    out = np.maximum(grade, 0).astype(np.float64)
    for level, value in gains.items():
        out[grade == level] = value
    return out


def _running_at(
    query: np.ndarray, rank: np.ndarray, running: np.ndarray, point_query: np.ndarray, point_rank: np.ndarray
) -> np.ndarray:
    """``running`` (a per-query running sum over hits sorted by query, rank) over the hits of
    ``point_query`` ranked above ``point_rank``; 0 when there are none."""
    if query.size == 0:
        return np.zeros(point_query.size)
    width = int(max(rank.max(initial=0), point_rank.max(initial=0))) + 2
    keys = query.astype(np.int64) * width + rank
    position = np.searchsorted(keys, point_query.astype(np.int64) * width + point_rank) - 1
    first = np.searchsorted(query, point_query)
    ok = position >= first
    out = np.zeros(point_query.size)
    out[ok] = running[position[ok]]
    return out
