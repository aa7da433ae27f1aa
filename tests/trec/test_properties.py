"""Property tests against pytrec_eval (trec_eval's C code) on random runs with many tied scores.

pytrec_eval evaluates only the queries present in both run and qrels; ours also fills qrels queries
missing from the run with zeros, so the comparison is on the shared queries, and the filled ones
are checked to be zero.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ultra_trec import scoring_sets
from ultra_trec.engine import evaluate
from ultra_trec.measures import parse_measure, parse_measures
from ultra_trec.reading.io import read_run

KS = (1, 2, 3, 5, 10)
CUT = ("P", "recall", "ndcg_cut", "success", "map_cut", "relative_P")
# Every measure pytrec_eval computes, asked with small cutoffs; runid and relstring are text (pytrec_eval
# returns 0 for them); iprec_at_recall and 11pt_avg round recall levels as trec_eval 9 did (compared below).
NINE_ROUNDING = {"iprec_at_recall", "11pt_avg"}
THEIRS = {
    name if name not in CUT else f"{name}.{','.join(map(str, KS))}"
    for name in pytrec_eval.supported_measures
    if name not in {"runid", "relstring", "Rprec_mult", *NINE_ROUNDING}
} | {"Rprec_mult.0.2,0.5,1.0,1.5,2.0"}
OURS = parse_measures(sorted(THEIRS), [])
# Docids whose byte order differs from their numeric and from their "natural" order.
DOCIDS = [f"d{i}" for i in range(25)] + ["D3", "doc-1", "d1a", "é9", "z", "Z0", "d09"]


_CASES = itertools.count()


def random_case(seed: int, tie_mode: str) -> tuple[dict, dict]:
    """Random qrels and run; query ids are unique per case because trec_eval caches per-query state
    in statics keyed by the query id, which makes repeated pytrec_eval calls unreliable otherwise."""
    rng = np.random.default_rng(seed)
    case = next(_CASES)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(int(rng.integers(1, 7))):
        qid = f"c{case}q{q}"
        pool = rng.choice(DOCIDS, size=int(rng.integers(1, len(DOCIDS))), replace=False)
        if rng.random() < 0.9:  # most queries are judged
            judged = rng.choice(DOCIDS, size=int(rng.integers(1, len(DOCIDS))), replace=False)
            grades = rng.integers(-1, 4, judged.size)
            grades[0] = max(grades[0], 0)  # trec_eval reads out of bounds when every grade is negative
            qrels[qid] = {str(d): int(g) for d, g in zip(judged, grades, strict=True)}
        if rng.random() < 0.85:  # most queries are in the run
            if tie_mode == "integers":
                scores = rng.integers(-2, 3, pool.size).astype(float)
            elif tie_mode == "all-equal":
                scores = np.zeros(pool.size)
            else:
                scores = np.round(rng.normal(0, 1, pool.size), 1)
            run[qid] = {str(d): float(s) for d, s in zip(pool, scores, strict=True)}
    if not qrels:
        qrels[f"c{case}q0"] = {"d1": 1}
    if not set(run) & set(qrels):
        run[next(iter(qrels))] = {"d1": 1.0, "d2": 1.0, "d10": 1.0}
    return qrels, run


def compare_with_pytrec(qrels: dict, run: dict, relevance_level: int) -> None:
    ours = evaluate(qrels, run, OURS, relevance_level=relevance_level)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, THEIRS, relevance_level=relevance_level).evaluate(run)
    per_query = ours.per_query
    assert set(theirs) == set(run) & set(qrels)
    for qid, values in theirs.items():
        assert {parse_measure(name).name for name in values} == {m.name for m in OURS}
        for name, value in values.items():
            key = parse_measure(name).name
            assert per_query[qid][key] == pytest.approx(value, abs=1e-12), (qid, key)
    for qid in set(qrels) - set(run):  # an empty ranking: zero, except the per-query logs and counts
        kept = {"gm_map", "gm_bpref", "num_q", "num_rel", "utility"}
        assert all(per_query[qid][m.name] == 0 for m in OURS if m.family not in kept)
        assert per_query[qid]["gm_map"] == pytest.approx(np.log(1e-5))
    assert ours.counts["queries_missing_in_run"] == len(set(qrels) - set(run))
    assert ours.counts["queries_only_in_run"] == len(set(run) - set(qrels))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    tie_mode=st.sampled_from(["integers", "all-equal", "one-decimal"]),
    relevance_level=st.sampled_from([1, 2]),
)
def test_matches_pytrec_eval_with_ties(seed: int, tie_mode: str, relevance_level: int) -> None:
    qrels, run = random_case(seed, tie_mode)
    compare_with_pytrec(qrels, run, relevance_level)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), tie_mode=st.sampled_from(["integers", "all-equal", "one-decimal"]))
def test_recall_levels_match_pytrec_eval_with_its_rounding(seed: int, tie_mode: str) -> None:
    """pytrec_eval bundles trec_eval 9, which turns recall level x into floor(x * R + 0.9) relevant
    documents; trec_eval 10.0 rounds (checked against its outputs in test_conformance). With the old
    rule swapped in, every value agrees to 1e-12, which checks the interpolation itself."""
    qrels, run = random_case(seed, tie_mode)
    original = scoring_sets.recall_cutoff
    scoring_sets.recall_cutoff = lambda level, num_rel: np.floor(level * num_rel + 0.9)
    try:
        ours = evaluate(qrels, run, ["iprec_at_recall", "11pt_avg"]).per_query
    finally:
        scoring_sets.recall_cutoff = original
    theirs = pytrec_eval.RelevanceEvaluator(qrels, NINE_ROUNDING).evaluate(run)
    for qid, values in theirs.items():
        for name, value in values.items():
            assert ours[qid][parse_measure(name).name] == pytest.approx(value, abs=1e-12), (qid, name)


def write_run(path: Path, run: dict, separator: str) -> None:
    lines = [
        separator.join([qid, "Q0", docid, str(rank), repr(score), "tag"])
        for qid, docs in run.items()
        for rank, (docid, score) in enumerate(docs.items(), start=1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), tie_mode=st.sampled_from(["integers", "one-decimal"]))
def test_file_readers_and_mapping_agree(seed: int, tie_mode: str) -> None:
    qrels, run = random_case(seed, tie_mode)
    expected = evaluate(qrels, run, OURS).per_query
    with tempfile.TemporaryDirectory() as folder:
        for name, separator in (("fast.run", " "), ("tabs.run", "\t"), ("padded.run", " \t ")):
            path = Path(folder) / name
            write_run(path, run, separator)
            table = read_run(path)
            assert (table.lines is None) == (name != "padded.run")  # padded columns take the careful reader
            assert evaluate(qrels, table, OURS).per_query == expected


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    tie_mode=st.sampled_from(["integers", "all-equal", "one-decimal"]),
    relevance_level=st.sampled_from([0, 1, 2, 3]),
    max_depth=st.sampled_from([None, 1, 3]),
)
def test_every_measure_is_finite_on_random_runs(seed: int, tie_mode: str, relevance_level: int, max_depth) -> None:
    """Every measure (those pytrec_eval lacks included) gives a finite number, or a short string."""
    qrels, run = random_case(seed, tie_mode)
    names = ["all_trec", "hits@3", "Judged@3", "mrr@2", "relstring@4"]
    result = evaluate(qrels, run, names, relevance_level=relevance_level, max_depth=max_depth)
    for name, column in result.values.items():
        assert np.all(np.isfinite(column)), name
    assert all(len(text) <= 4 and set(text) <= set("0123456789>-.") for text in result.text["relstring@4"])
    assert set(result.text["runid"]) == {"run"}
    for share in ("unj@5", "Judged@3", "set_P", "bpref", "infAP", "rbp", "rbp_resid"):
        assert np.all((result.column(share) >= 0) & (result.column(share) <= 1 + 1e-12)), share
