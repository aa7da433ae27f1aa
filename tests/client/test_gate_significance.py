"""``no_significant_drop: true``: the run against a baseline with the report server's compare tool (paired test,
Holm across metrics), on 159 real answers (data/answers) and a copy where half of them became "I don't know"."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml

from tests.client.test_gates import check_junit, gate_file, verdict_row
from tests.conftest import ROOT, run_ultra
from tests.support.together import at_once

ANSWERS = ROOT / "data" / "answers" / "mtrag_gpt4o_answers.jsonl"


def answers_run(tmp_path: Path, name: str, spoil: bool, *extra: str) -> Callable[[], tuple[object, Path]]:
    """The run of evaluate_results over the answers (every other one spoilt when ``spoil``): its files are written
    now (the evaluation's in a folder of the name's own), the run is the call returned (several may run at once)."""
    records = [json.loads(line) for line in ANSWERS.read_text().splitlines()]
    if spoil:  # every other answer becomes useless
        records = [{**r, "pred_answer": "I don't know."} if i % 2 else r for i, r in enumerate(records)]
    data = tmp_path / f"{name}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    params = yaml.safe_load((ROOT / "examples/parameters/evaluate_results_parameter.yaml").read_text())
    params["benchmark"]["benchmark"]["path"] = str(data)
    params["evaluation"].update(metrics=["em", "f1"], save_path=str(tmp_path / "evaluation" / name))
    (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(params))
    pipeline = str(ROOT / "examples/evaluate_results.yaml")
    args = ("--param", f"{name}.yaml", "--output-dir", str(tmp_path / name), *extra)

    def run() -> tuple[object, Path]:
        done = run_ultra("run", pipeline, *args, cwd=tmp_path, timeout=240)
        (folder,) = [p for p in (tmp_path / name).iterdir() if p.is_dir()]
        return done, folder

    return run


def test_no_significant_drop_passes_an_equal_run_and_fails_a_worse_one(tmp_path: Path) -> None:
    done, baseline = answers_run(tmp_path, "main", False)()
    assert done.returncode == 0, done.stderr
    gate = gate_file(tmp_path, [{"metric": "eval_res.avg_f1", "baseline": str(baseline), "no_significant_drop": True}])
    runs = {  # the equal run and the worse one, at once
        "same": answers_run(tmp_path, "same", False, "--gate", str(gate)),
        "worse": answers_run(tmp_path, "worse", True, "--gate", str(gate), "--junit", str(tmp_path / "g.xml")),
    }
    (same, _), (worse, folder) = at_once(runs).values()
    assert same.returncode == 0, same.stdout + same.stderr
    row = verdict_row(same.stdout, "eval_res.avg_f1: no significant drop vs baseline")
    assert row[2] == "PASS" and "this run - baseline = +0.0000 over 159 items" in row[3]

    assert worse.returncode == 1, worse.stdout + worse.stderr
    f1 = [json.loads((f / "memory.json").read_text())["eval_res"]["avg_f1"] for f in (folder, baseline)]
    row = verdict_row(worse.stdout, "eval_res.avg_f1: no significant drop vs baseline")
    assert row[:3] == [f"{f1[0]:.4f}", f"{f1[1]:.4f}", "FAIL"]
    assert f"significant drop: this run - baseline = {f1[0] - f1[1]:+.4f} over 159 paired items" in row[3]
    comparison = json.loads(next((folder / "gate_compare").rglob("comparison.json")).read_text())
    (f1_row,) = [r for r in comparison["rows"] if r["metric"] == "f1"]
    assert f1_row["significant"] and f1_row["p_holm"] < 0.05
    (case,) = check_junit(tmp_path / "g.xml").iter("testcase")  # a failure validated against the schema too
    assert case.get("name") == "eval_res.avg_f1: no significant drop vs baseline"
    assert case.find("failure").get("message").startswith("significant drop")
