"""Counts (num_ret, num_rel, num_rel_ret: ``kind: count`` in the TREC registry) are declared by evaluate_trec's
result file and never summarised, charted, led with or compared as metrics; the report shows them as counts.

Two real ``ultra run``s of examples/eval_trec.yaml: the TREC sample run and data/trec/results.perturbed (the
same documents, shuffled scores), then ``ultra report``, ``ultra compare`` and ``ultra gate`` on their folders.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.client.test_gates import gate_file
from tests.conftest import ROOT, run_ultra
from tests.report.conftest import OUTSIDE, run_example
from tests.report.helpers import table_rows
from tests.support.together import at_once

COUNTS = ("num_ret", "num_rel", "num_rel_ret")
METRICS = ["map", "ndcg@10", "P@5", "recall@100"]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("counts")

    def one(name: str, run: str) -> Path:
        edits = {"evaluation": {"ir_metrics": METRICS, "ks": [], "run_path": run}}
        return run_example("eval_trec", base / name, env=OUTSIDE, **edits)

    runs = {"a": "data/trec/results.test", "b": "data/trec/results.perturbed"}
    folders = at_once({name: (lambda name=name: one(name, runs[name])) for name in runs})
    return folders["a"], folders["b"]


def result_file(folder: Path) -> dict:
    (path,) = (folder / "files").rglob("evaluate_trec_*.json")
    return json.loads(path.read_text())


def test_the_result_file_declares_its_counts(two_runs: tuple[Path, Path]) -> None:
    document = result_file(two_runs[0])
    kinds = document["settings"]["metric_kinds"]
    assert {name: kinds[name] for name in COUNTS} == dict.fromkeys(COUNTS, "count")
    assert {name: kinds[name] for name in METRICS} == dict.fromkeys(METRICS, "continuous")
    assert set(next(iter(document["per_query"].values()))) == {*METRICS, *COUNTS}


def test_the_report_shows_counts_as_counts_never_as_metrics(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = run_ultra("report", *map(str, two_runs), "--out", str(out), cwd=ROOT, env=OUTSIDE, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    with (out / "summary.csv").open(newline="") as handle:
        summarised = {row["metric"] for row in csv.DictReader(handle)}
    assert summarised == set(METRICS)  # no mean and interval of num_ret
    assert not [p.name for p in out.glob("*.png") if any(c in p.name for c in COUNTS)]  # no chart of a count
    html = (out / "report.html").read_text()
    headline = html[html.index('id="headline"') : html.index("</table>", html.index('id="headline"'))]
    assert not any(c in headline for c in COUNTS) and "map" in headline
    comparison = html[html.index('id="comparison"') :]
    assert not any(f"<td>{c}</td>" in comparison for c in COUNTS)
    rows = table_rows(html, "count-table")  # the counts: per run, summed over its queries, as evaluate_trec says
    expected = [[str(result_file(f)["counts"][c]) for c in COUNTS] for f in two_runs]
    assert [row[2:] for row in rows] == expected and [row[1] for row in rows] == ["3", "3"]
    assert expected[0] == ["1500", "561", "131"]  # trec_eval's own counts of its test run
    with (out / "per_query.csv").open(newline="") as handle:
        first = next(csv.DictReader(handle))
    assert all(first[c] for c in COUNTS)  # still shown per query


def test_compare_and_gates_never_compare_counts(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = map(str, two_runs)
    done = run_ultra("compare", a, b, "--out", str(tmp_path / "cmp"), cwd=ROOT, env=OUTSIDE, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert {row["metric"] for row in document["rows"]} == set(METRICS)
    assert document["counts"] == sorted(COUNTS)
    assert not any(c in done.stdout for c in COUNTS)
    assert not [p.name for p in (tmp_path / "cmp").glob("*.png") if any(c in p.name for c in COUNTS)]
    page = (tmp_path / "cmp" / "compare.html").read_text()
    assert not any(f"<td>{c}</td>" in page or f"<th>{c}</th>" in page for c in COUNTS)

    conditions = [
        {"metric": "counts.num_rel_ret", "baseline": a, "no_significant_drop": True},
        {"metric": "eval_res.map", "baseline": a, "no_significant_drop": True},
    ]
    gated = run_ultra("gate", b, "--gate", str(gate_file(tmp_path, conditions)), cwd=ROOT, env=OUTSIDE, timeout=300)
    assert gated.returncode == 2, gated.stdout + gated.stderr  # the count cannot be tested: an error, said why
    assert "counts.num_rel_ret is a count (kind count in its registry), not a metric" in " ".join(gated.stdout.split())
    assert "eval_res.map: no significant drop vs baseline" in gated.stdout
