"""Per-query values of trec_eval's set, count and recall-level measures (see ``scoring`` for the contract).

Each function takes the ``Judged`` hits and a parameter (a rank cutoff, a recall level, a multiple
of R, or None) and returns one float per evaluated query, following trec_eval 10.0's C code
(``m_<name>.c``) including its edge cases: a query without relevant documents scores 0.
"""

from __future__ import annotations

import numpy as np

from ultra_trec.scoring import Judged, average_precision, running_count

MIN_GEO_MEAN = 0.00001  # trec_eval's floor before the log of gm_map and gm_bpref
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
UTILITY_DEFAULT = (1.0, -1.0, 0.0, 0.0)


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """top / bottom per query, 0 where bottom is 0."""
    return np.divide(top, bottom, out=np.zeros(top.shape), where=bottom > 0)


def num_q(judged: Judged, k: None) -> np.ndarray:
    return np.ones(judged.num_queries)


def num_ret(judged: Judged, k: None) -> np.ndarray:
    return judged.num_ret


def num_rel(judged: Judged, k: None) -> np.ndarray:
    return judged.num_rel.astype(np.float64)


def num_rel_ret(judged: Judged, k: None) -> np.ndarray:
    return judged.num_rel_ret


def set_precision(judged: Judged, k: None) -> np.ndarray:
    return _ratio(judged.num_rel_ret, judged.num_ret)


def set_recall(judged: Judged, k: None) -> np.ndarray:
    return judged.over_num_rel(judged.num_rel_ret)


def set_relative_precision(judged: Judged, k: None) -> np.ndarray:
    return _ratio(judged.num_rel_ret, np.minimum(judged.num_ret, judged.num_rel))


def set_map(judged: Judged, k: None) -> np.ndarray:
    return _ratio(judged.num_rel_ret * judged.num_rel_ret, judged.num_ret * judged.num_rel)


def set_f(judged: Judged, beta: tuple[float, ...] | None) -> np.ndarray:
    """F_beta = (beta + 1) P R / (beta P + R) (trec_eval's x, default 1.0: F1); 0 without a relevant hit."""
    x = 1.0 if beta is None else beta[0]
    found = judged.num_rel_ret > 0
    p = _ratio(judged.num_rel_ret, judged.num_ret)
    r = judged.over_num_rel(judged.num_rel_ret)
    values = np.zeros(judged.num_queries)
    values[found] = (x + 1.0) * p[found] * r[found] / (x * p[found] + r[found])
    return values


def utility(judged: Judged, coefficients: tuple[float, ...] | None) -> np.ndarray:
    """a * rel_ret + b * nonrel_ret + c * rel_missed + d * (N + rel_ret - ret - R), N = 0 (trec_eval's -N);
    trec_eval's default coefficients 1, -1, 0, 0 give relevant retrieved - non-relevant retrieved."""
    a, b, c, d = UTILITY_DEFAULT if coefficients is None else coefficients
    rel_ret, ret, rel = judged.num_rel_ret, judged.num_ret, judged.num_rel.astype(np.float64)
    return a * rel_ret + b * (ret - rel_ret) + c * (rel - rel_ret) + d * (rel_ret - ret - rel)


def gm_map(judged: Judged, k: None) -> np.ndarray:
    """log(max(AP, 0.00001)) per query; the summary is exp of the mean (the geometric mean)."""
    return np.log(np.maximum(average_precision(judged, None), MIN_GEO_MEAN))


def relative_precision(judged: Judged, k: int) -> np.ndarray:
    """Relevant in the top k / min(k, R); 0 for a query without relevant documents."""
    return _ratio(judged.per_query(judged.within(k)), np.minimum(float(k), judged.num_rel))


def r_precision_multiple(judged: Judged, k: float) -> np.ndarray:
    """Precision at rank floor(k * R + 0.9) (trec_eval's rounding); 0 when that rank is 0."""
    cut = np.floor(k * judged.num_rel + 0.9)
    found = judged.per_query(judged.rel_rank < cut[judged.rel_query])
    return _ratio(found, cut)


def interpolated_precision(judged: Judged, k: float) -> np.ndarray:
    """Interpolated precision at recall level k: the best precision at or after the rank where
    round(k * R) relevant documents are retrieved (trec_eval 10.0 rounds half away from zero)."""
    return _iprec(judged, recall_cutoff(k, judged.num_rel.astype(np.float64)))


def eleven_point_average(judged: Judged, levels: tuple[float, ...] | None) -> np.ndarray:
    """Mean interpolated precision over recall levels (default 0.0, 0.1, ..., 1.0), as trec_eval's loop:
    levels are taken from the last; those past the relevant retrieved count 0, and once a level is out
    of order (or 0) it and every earlier one get the interpolated precision at the first relevant hit."""
    levels = RECALL_LEVELS if levels is None else levels
    retrieved = judged.num_rel_ret
    num_rel = judged.num_rel.astype(np.float64)
    first = _iprec(judged, np.ones(judged.num_queries))
    total = np.zeros(judged.num_queries)
    skipping = np.ones(judged.num_queries, dtype=bool)
    blocked = np.zeros(judged.num_queries, dtype=bool)
    previous = np.full(judged.num_queries, np.inf)
    for level in reversed(levels):
        cut = recall_cutoff(level, num_rel)
        skipping &= cut > retrieved
        taken = ~skipping & ~blocked & (cut >= 1) & (cut <= previous)
        blocked |= ~skipping & ~taken
        total += np.where(taken, _iprec(judged, cut), np.where(blocked, first, 0.0))
        previous = np.where(taken, cut, previous)
    return total / len(levels)


def binary_g(judged: Judged, k: None) -> np.ndarray:
    """Sum over relevant retrieved of 1 / log2(2 + non-relevant ranked above), / R."""
    seen = running_count(judged.rel_query)
    terms = 1.0 / np.log2(3.0 + judged.rel_rank - seen)
    return judged.over_num_rel(judged.per_query(np.ones(seen.size, dtype=bool), terms))


def _iprec(judged: Judged, wanted: np.ndarray) -> np.ndarray:
    """Per query: max precision over relevant ranks from the ``wanted``-th relevant one on (1st for 0)."""
    query, best = judged.rel_query, judged.precision_from_here
    retrieved = judged.num_rel_ret
    values = np.zeros(judged.num_queries)
    ok = (wanted <= retrieved) & (retrieved > 0)
    first = np.searchsorted(query, np.arange(judged.num_queries))
    values[ok] = best[first[ok] + np.maximum(wanted[ok], 1).astype(np.int64) - 1]
    return values


def recall_cutoff(level: float, num_rel: np.ndarray) -> np.ndarray:
    """How many relevant documents recall ``level`` means: round(level * R), half away from zero, as
    trec_eval 10.0 (C's lround); trec_eval 9 and pytrec_eval use floor(level * R + 0.9) instead."""
    values = level * num_rel
    floor = np.floor(values)
    return floor + (values - floor >= 0.5)
