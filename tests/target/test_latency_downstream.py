"""Latency downstream of target.ask, through the ``ultra`` command: the run's summary, a gate on
``latency.p95`` (lower is better), ``ultra compare``'s p50 / p95 rows, the report's ECDF, and ``ultra sweep``
over a target setting (``settings.top_k``) ranked on a metric with the latency beside it.
examples/eval_target_python.yaml (the python kind over data/rag), real subprocesses, offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, in_background
from tests.support.together import at_once

PIPELINE = ROOT / "examples/eval_target_python.yaml"
ENV = {"ULTRA_READ_ROOTS": str(ROOT)}


def params(tmp_path: Path, top_k: int) -> Path:
    """The example's parameter file with absolute paths and ``settings: {top_k: ...}``."""
    loaded = yaml.safe_load((ROOT / "examples/parameters/eval_target_python_parameter.yaml").read_text())
    loaded["benchmark"]["benchmark"]["path"] = str(ROOT / "data/rag/questions.jsonl")
    target = loaded["target"]["target"]
    target.update(function=f"{ROOT / 'examples/targets/rag.py'}:answer", settings={"top_k": top_k})
    loaded["evaluation"]["qrels_path"] = loaded["custom"]["qrels_path"] = str(ROOT / "data/rag/qrels.trec")
    path = tmp_path / f"params_{top_k}.yaml"
    path.write_text(yaml.safe_dump(loaded))
    return path


def run(tmp_path: Path, top_k: int, *extra: str) -> tuple[object, Path]:
    out = tmp_path / f"runs_{top_k}"
    done = run_ultra("run", str(PIPELINE), "--param", str(params(tmp_path, top_k)), "--output-dir", str(out), *extra,
                     cwd=tmp_path, env=ENV, timeout=300)  # fmt: skip
    folders = sorted(p for p in out.iterdir() if p.is_dir()) if out.is_dir() else []
    return done, folders[-1] if folders else Path()


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object, Path, Path]:
    tmp_path = tmp_path_factory.mktemp("latency")
    gate = tmp_path / "gate.yaml"
    gate.write_text(
        yaml.safe_dump({"gate": [{"metric": "latency.p95", "max": 2.0}, {"metric": "latency.p50", "max": 1e-9}]})
    )
    both = at_once({5: lambda: run(tmp_path, 5, "--gate", str(gate)), 1: lambda: run(tmp_path, 1)})
    (done, first), (again, second) = both[5], both[1]
    assert again.returncode == 0, again.stderr
    return tmp_path, done, first, second


def test_the_summary_shows_the_latency_and_a_gate_reads_it_lower_is_better(two_runs) -> None:
    _, done, first, _ = two_runs
    memory = json.loads((first / "memory.json").read_text())
    latency = memory["latency"]
    assert latency["count"] == 159 and 0 < latency["p50"] <= latency["p95"] <= latency["max"]
    lines = done.stdout.splitlines()
    assert any(line.split()[:2] == ["latency", "p50"] for line in lines)
    assert any(line.split()[:2] == ["p95", f"{latency['p95']:.4f}"] for line in lines)
    assert done.returncode == 1, done.stdout + done.stderr  # p50 <= 1e-9 s cannot hold
    verdicts = {line.split()[0]: line.split() for line in lines if line.startswith("latency.")}
    assert verdicts["latency.p95"][5:7] == ["PASS", "lower"] and verdicts["latency.p50"][5:7] == ["FAIL", "lower"]


def test_compare_and_report_show_the_latency(two_runs) -> None:
    tmp_path, _, first, second = two_runs
    done = run_ultra("compare", str(first), str(second), cwd=tmp_path, env=ENV, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "latency p50" in done.stdout and "latency p95" in done.stdout
    rows = json.loads(next((tmp_path / "output").rglob("comparison.json")).read_text())["rows"]
    p95 = next(row for row in rows if row["metric"] == "latency p95")
    records = [[json.loads(line) for line in next((run / "files").glob("ask_*.jsonl")).read_text().splitlines()]
               for run in (first, second)]  # fmt: skip
    import numpy as np

    a, b = (np.array([r["latency"] for r in rs]) for rs in records)
    assert p95["diff"] == pytest.approx(np.percentile(b, 95) - np.percentile(a, 95))
    assert p95["ci_low"] <= p95["diff"] <= p95["ci_high"] and p95["higher_is_better"] is False
    report = run_ultra("report", str(first), cwd=tmp_path, env=ENV, timeout=300)
    assert report.returncode == 0, report.stderr
    assert list((tmp_path / "output").rglob("ecdf_latency.png"))


def test_a_gate_against_a_baseline_pairs_the_latency_quantiles(two_runs) -> None:
    tmp_path, _, first, second = two_runs
    gate = tmp_path / "paired.yaml"
    gate.write_text(
        yaml.safe_dump({"gate": [{"metric": "latency.p95", "baseline": str(first), "no_significant_drop": True}]})
    )
    done = run_ultra("gate", str(second), "--gate", str(gate), cwd=tmp_path, env=ENV, timeout=300)
    line = next(line for line in done.stdout.splitlines() if line.startswith("latency.p95"))
    note = " ".join(done.stdout.split("\n  latency.p95", 1)[1].split("\ngate: ")[0].split())  # under the table
    assert done.returncode in (0, 1) and "ERROR" not in line and "p (Holm)" in note and "lower" in line


def top_k_sweep(tmp_path: Path) -> Command:
    """The sweep, in ``tmp_path`` (it runs in the background: tests/support/background.py)."""
    grid = "target.target.settings.top_k=[1, 10]"
    args = ("--param", str(params(tmp_path, 5)), "--grid", grid, "--metric", "retrieval_scores.ndcg@10")
    return Command(("sweep", str(PIPELINE), *args, "--output-dir", str(tmp_path / "sw")), timeout=600, env=ENV,
                   cwd=tmp_path)  # fmt: skip


@in_background(top_k_sweep)
def test_sweep_over_a_target_setting_ranks_trials_with_the_latency_beside(background_run: Finished) -> None:
    done, tmp_path = background_run.done, background_run.folder
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads((tmp_path / "sw" / "sweep.json").read_text())
    rows = {row["target.target.settings.top_k"]: row for row in document["rows"]}
    assert rows[10]["retrieval_scores.ndcg@10"] > rows[1]["retrieval_scores.ndcg@10"] and rows[10]["rank"] == 1
    assert all(row["latency.p95"] > 0 for row in rows.values())
    header = next(line for line in done.stdout.splitlines() if line.startswith("rank"))
    assert header.split()[:8] == ["rank", "trial", "target.target.settings.top_k", "retrieval_scores.ndcg@10", "p",
                                  "(Holm)", "latency.p50", "latency.p95"]  # fmt: skip
