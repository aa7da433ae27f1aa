"""Rank cutoffs that are not positive whole numbers (``-m P.1.5``, ``P.abc``, ``P.0``), through ``ultra trec_eval``
and ``ultra call evaluation.evaluate_trec``, against what trec_eval does (seen through pytrec_eval, which runs
trec_eval's C code: its ``atol`` reads ``1.5`` as 1 and ``12abc`` as 12, silently; 0, ``-3`` and ``abc`` stop it
with "Negative cutoff detected", which aborts pytrec_eval's process, so those are not asked of it here).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra

QRELS = ROOT / "data/trec/qrels.test"
RUN = ROOT / "data/trec/results.test"


def _trec_eval(*args: str):
    return run_ultra("trec_eval", *args, str(QRELS), str(RUN), cwd=ROOT)


def _evaluate_trec(measure: str, tmp_path: Path):
    return run_ultra(
        "call",
        "evaluation.evaluate_trec",
        f"run_path={RUN}",
        f"qrels_path={QRELS}",
        f"ir_metrics={json.dumps([measure])}",
        "ks=[]",
        "names=trec_eval",
        f"save_path={tmp_path}/",
        cwd=tmp_path,
    )


def _summary(stdout: str) -> dict[str, float]:
    return {line.split("\t")[0].strip(): float(line.split("\t")[2]) for line in stdout.splitlines()}


def _reference(measure: str) -> dict[str, float]:
    """pytrec_eval's (trec_eval's C code's) mean over the queries of each measure it prints for ``measure``."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels: dict[str, dict[str, int]] = {}
    for line in QRELS.read_text().splitlines():
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    run: dict[str, dict[str, float]] = {}
    for line in RUN.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    names = next(iter(per_query.values()))
    return {name: sum(row[name] for row in per_query.values()) / len(per_query) for name in names}


@pytest.mark.parametrize(
    ("measure", "cutoff", "read_as"),
    [
        ("P.1.5", "1.5", {"P_1"}),
        ("P.5,1.5", "1.5", {"P_1", "P_5"}),
        ("ndcg_cut.1.5", "1.5", {"ndcg_cut_1"}),
        ("recall.12abc", "12abc", {"recall_12"}),
    ],
)
def test_a_cutoff_trec_eval_truncates_is_refused_by_both_paths(
    measure: str, cutoff: str, read_as: set[str], tmp_path: Path
) -> None:
    assert set(_reference(measure)) == read_as  # trec_eval silently cuts the cutoff short
    done = _trec_eval("-m", measure)
    assert done.returncode == 2 and done.stdout == ""
    assert f"-m {measure}: cutoff {cutoff!r} is not a whole number" in done.stderr
    assert "would silently read it as" in done.stderr and "Traceback" not in done.stderr
    called = _evaluate_trec(measure, tmp_path)
    assert called.returncode != 0 and f"{measure!r}: cutoff {cutoff!r} is not a whole number" in called.stderr
    assert "Traceback" not in called.stderr and not list(tmp_path.glob("evaluate_trec*.json"))


@pytest.mark.parametrize(
    ("measure", "message"),
    [
        ("P.0", "cutoff 0 is not positive; cutoffs must be positive integers"),
        ("P.-3", "cutoff -3 is not positive"),
        ("ndcg_cut.0", "cutoff 0 is not positive"),
        ("recall.-3", "cutoff -3 is not positive"),
        ("P.abc", "cutoff 'abc' is not a number; cutoffs must be positive integers"),
        ("P.5,", "cutoff '' is not a number"),
    ],
)
def test_a_cutoff_trec_eval_refuses_is_refused(measure: str, message: str) -> None:
    done = _trec_eval("-m", measure)
    assert done.returncode == 2 and done.stdout == ""  # trec_eval: "Negative cutoff detected", status 2
    assert f"-m {measure}: {message}" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("measure", ["P.05,1", "ndcg_cut.010,3", "recall.+5"])
def test_whole_cutoffs_in_other_spellings_match_the_reference_and_the_tool(measure: str, tmp_path: Path) -> None:
    done = _trec_eval("-m", measure)
    assert done.returncode == 0, done.stderr
    printed = {name: value for name, value in _summary(done.stdout).items() if name != "runid"}
    reference = _reference(measure.replace("+", ""))  # pytrec_eval's own front refuses the sign trec_eval reads
    assert printed.keys() == reference.keys() and len(printed) == measure.count(",") + 1
    for name, value in reference.items():
        assert printed[name] == pytest.approx(value, abs=5e-5), name
    called = _evaluate_trec(measure, tmp_path)
    assert called.returncode == 0, called.stderr
    eval_res = json.loads(called.stdout)["eval_res"]
    assert eval_res.keys() == printed.keys()
    for name, value in eval_res.items():
        assert round(value, 4) == printed[name], name
