"""Per-query values of the measures that read every judged document, relevant or not.

Their families are marked ``needs_judged_nonrelevant`` so that the ranker keeps every judged row:
grade >= relevance level (relevant), 0 <= grade < level (judged non-relevant), grade < 0 (in the
pool but unjudged, trec_eval's RELVALUE_UNJUDGED). A retrieved document absent from the qrels is
not in the hits (outside the pool). Formulas follow trec_eval 10.0 (``m_bpref.c``, ``m_infap.c``,
``m_unjudged.c``, ``m_rbp_resid.c``, ``m_relstring.c``, ``m_num_nonrel_judged_ret.c``).
"""

from __future__ import annotations

import numpy as np

from ultra_trec.scoring import Judged, count_before, query_sum, running_count
from ultra_trec.scoring_sets import MIN_GEO_MEAN

INFAP_EPSILON = 0.00001
RBP_PERSISTENCE = 0.9  # trec_eval's default p of rbp and rbp_resid
RELSTRING_LENGTH = 10  # trec_eval's default length of relstring


def _kinds(judged: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per hit: relevant, judged non-relevant, in the pool but unjudged (negative grade)."""
    judged.require_all_judged("this measure")
    grade = judged.hits.grade
    relevant = judged.relevant
    return relevant, (grade >= 0) & ~relevant, grade < 0


def bpref(judged: Judged, k: None) -> np.ndarray:
    """Per relevant hit: 1 - min(non-relevant above, R) / min(judged non-relevant, R); summed, / R."""
    relevant, nonrel, _ = _kinds(judged)
    query = judged.hits.query
    above = count_before(query, nonrel)[relevant]
    rel_query = query[relevant]
    r = judged.num_rel[rel_query].astype(np.float64)
    cap = np.minimum(judged.num_nonrel[rel_query], r).astype(np.float64)
    terms = np.ones(above.size)
    some = above > 0
    terms[some] = 1.0 - np.minimum(above[some], r[some]) / cap[some]
    return judged.over_num_rel(query_sum(rel_query, terms, judged.num_queries))


def gm_bpref(judged: Judged, k: None) -> np.ndarray:
    """log(max(bpref, 0.00001)); the summary is the geometric mean."""
    return np.log(np.maximum(bpref(judged, None), MIN_GEO_MEAN))


def inferred_ap(judged: Judged, k: None) -> np.ndarray:
    """infAP (Yilmaz and Aslam): precision at each relevant hit estimated from the judged ones above."""
    relevant, nonrel, unjudged = _kinds(judged)
    query = judged.hits.query
    nonrel_above = count_before(query, nonrel)[relevant]
    unjudged_above = count_before(query, unjudged)[relevant]
    rel_query = query[relevant]
    rel_above = running_count(rel_query) - 1.0
    j = judged.hits.rank[relevant].astype(np.float64)
    terms = np.ones(j.size)
    later = j > 0
    jj, ra, na = j[later], rel_above[later], nonrel_above[later]
    terms[later] = 1.0 / (jj + 1.0) + (jj / (jj + 1.0)) * ((ra + na + unjudged_above[later]) / jj) * (
        (ra + INFAP_EPSILON) / (ra + na + 2 * INFAP_EPSILON)
    )
    return judged.over_num_rel(query_sum(rel_query, terms, judged.num_queries))


def unjudged(judged: Judged, k: int) -> np.ndarray:
    """Share of the top k not judged (absent from the qrels or graded < 0), over k."""
    _kinds(judged)
    hits = judged.hits
    judged_top = np.bincount(hits.query[(hits.grade >= 0) & (hits.rank < k)], minlength=judged.num_queries)
    return (np.minimum(judged.num_ret, k) - judged_top) / k


def judged_share(judged: Judged, k: int) -> np.ndarray:
    """ir_measures' Judged@k: documents of the top k present in the qrels, over min(k, retrieved)."""
    judged.require_all_judged("Judged")
    hits = judged.hits
    found = np.bincount(hits.query[hits.rank < k], minlength=judged.num_queries).astype(np.float64)
    shown = np.minimum(judged.num_ret, k)
    return np.divide(found, shown, out=np.zeros(judged.num_queries), where=shown > 0)


def num_nonrel_judged_ret(judged: Judged, k: None) -> np.ndarray:
    _, nonrel, _ = _kinds(judged)
    return np.bincount(judged.hits.query[nonrel], minlength=judged.num_queries).astype(np.float64)


def rbp_residual(judged: Judged, p: float | None) -> np.ndarray:
    """The rbp mass left to unjudged documents (p = 0.9 unless given), p^n + (1 - p) * sum of p^rank over unjudged ranks
    (= 1 - (1 - p) * the same sum over judged ranks); 0 when every retrieved document is judged."""
    _kinds(judged)
    p = RBP_PERSISTENCE if p is None else p
    hits = judged.hits
    known = hits.grade >= 0
    judged_mass = query_sum(hits.query[known], p ** hits.rank[known], judged.num_queries)
    count = np.bincount(hits.query[known], minlength=judged.num_queries)
    values = 1.0 - (1.0 - p) * judged_mass
    return np.where(judged.num_ret > count, values, 0.0)


def relstring(judged: Judged, k: int | None) -> np.ndarray:
    """The grades of the first k (10) retrieved documents as text: '0'-'9', '>' above 9,
    '-' not in the qrels, '.' graded < 0 (trec_eval's relstring)."""
    judged.require_all_judged("relstring")
    length = RELSTRING_LENGTH if k is None else k
    hits = judged.hits
    top = hits.rank < length
    chars = np.full((judged.num_queries, length), ord("-"), dtype=np.uint8)
    grade = hits.grade[top]
    code = np.where(grade > 9, ord(">"), np.where(grade >= 0, ord("0") + np.clip(grade, 0, 9), ord(".")))
    chars[hits.query[top], hits.rank[top]] = code
    shown = np.minimum(judged.hits.num_ret, length)
    return np.array([row[:n].tobytes().decode("ascii") for row, n in zip(chars, shown, strict=True)], dtype=object)


def runid(judged: Judged, k: None) -> np.ndarray:
    """The run's tag (sixth column of its first line), for every query."""
    return np.array([judged.run_id] * judged.num_queries, dtype=object)
