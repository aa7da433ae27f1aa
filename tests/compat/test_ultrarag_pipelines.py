"""UltraRAG's benchmark/evaluation example pipelines (examples/compat/) build and run under `ultra`.

Each pipeline is built from a copy in a temporary folder (so the shipped parameter file is not
rewritten) and run with the shipped parameter file, its save_path moved under the test's folder.
The numbers are checked against references computed apart from the pipeline: trec_eval's own
output for the TREC example, the evaluation functions called directly for the answer examples.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.evaluation.helpers import score_answers
from tests.support.summary_check import check_summary

COMPAT = ROOT / "examples/compat"
PIPELINES = ("load_data", "evaluate_results", "eval_trec", "eval_trec_pvalue", "evaluate_answerable")
ENV = {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}


def shipped_params(name: str) -> dict:
    return yaml.safe_load((COMPAT / "parameters" / f"{name}_parameter.yaml").read_text())


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("name", PIPELINES)
def test_compat_pipeline_builds_to_the_shipped_parameter_keys(name: str, tmp_path: Path) -> None:
    pipeline = tmp_path / f"{name}.yaml"
    shutil.copy(COMPAT / f"{name}.yaml", pipeline)
    result = run_ultra("build", str(pipeline), cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    built = yaml.safe_load((tmp_path / "parameters" / f"{name}_parameter.yaml").read_text())
    shipped = shipped_params(name)
    assert {s: sorted(v) for s, v in built.items()} == {s: sorted(v) for s, v in shipped.items()}


def run_compat(name: str, tmp_path: Path, **evaluation: object) -> dict:
    params = shipped_params(name)
    if "evaluation" in params:
        params["evaluation"].update(save_path=str(tmp_path / "evaluation"), **evaluation)
    tmp_path.mkdir(parents=True, exist_ok=True)
    param_file = tmp_path / "params.yaml"
    param_file.write_text(yaml.safe_dump(params))
    result = run_ultra(
        "run", str(COMPAT / f"{name}.yaml"), "--param", str(param_file), "--output-dir", str(tmp_path / "runs"),
        cwd=ROOT, env=ENV, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    check_summary(result, ROOT)
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    return json.loads((folder / "memory.json").read_text())


def test_load_data_reads_the_dataset(tmp_path: Path) -> None:
    memory = run_compat("load_data", tmp_path)
    spec = shipped_params("load_data")["benchmark"]["benchmark"]
    rows = jsonl(ROOT / spec["path"])
    assert memory["q_ls"] == [row["question"] for row in rows]
    assert memory["gt_ls"] == [row["golden_answers"] for row in rows]
    assert memory["data_info"]["kept_rows"] == len(rows)


def test_evaluate_results_scores_the_saved_predictions(tmp_path: Path) -> None:
    memory = run_compat("evaluate_results", tmp_path)
    settings = shipped_params("evaluate_results")["evaluation"]
    expected = score_answers(memory["pred_ls"], memory["gt_ls"], settings["metrics"])
    assert len(memory["pred_ls"]) == 159
    for metric in settings["metrics"]:
        assert memory["eval_res"][f"avg_{metric}"] == pytest.approx(expected[f"avg_{metric}"], abs=1e-12), metric


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        # trec_eval qrels.test results.test (tests/data/trec_eval/out.test.aq, 4 decimals)
        (None, {"map": 0.1785, "mrr": 0.4064, "P@5": 0.2667, "recall@100": 0.4980, "ndcg@10": 0.3016}),
        # a run missing topic 302: trec_eval -c scores it 0 (out.test.aqc); UltraRAG's pytrec_eval drops it
        ("tests/data/trec_eval/results.trunc", {"map": 0.1016, "mrr": 0.1667, "P@5": 0.2, "ndcg@10": 0.1717}),
    ],
)
def test_eval_trec_equals_trec_eval(run: str | None, expected: dict, tmp_path: Path) -> None:
    memory = run_compat("eval_trec", tmp_path, **({"run_path": run} if run else {}))
    assert {k: round(memory["eval_res"][k], 4) for k in expected} == expected


def test_eval_trec_pvalue_compares_the_two_runs(tmp_path: Path) -> None:
    memory = run_compat("eval_trec_pvalue", tmp_path, n_resamples=2000, correction="none")
    one = run_compat("eval_trec", tmp_path / "new", run_path="data/trec/results.perturbed")["eval_res"]
    rows = {row["metric"]: row for row in memory["table"]}
    assert set(rows) >= {"map", "mrr", "ndcg@10", "P@5", "recall@100"}
    assert rows["map"]["A_mean"] == pytest.approx(one["map"], abs=1e-12)
    for row in rows.values():
        assert 0 < row["p_value"] <= 1
        assert row["significant"] == (row["p_value"] < 0.05)  # correction: none flags p < alpha, as UltraRAG


def test_evaluate_answerable_scores_only_answerable_turns(tmp_path: Path) -> None:
    memory = run_compat("evaluate_answerable", tmp_path)
    rows = jsonl(ROOT / "data/mtrag/mtrag_sample.jsonl")
    kept = [r for r in rows if r["answerability"] == "ANSWERABLE"]
    settings = shipped_params("evaluate_answerable")["evaluation"]
    expected = score_answers([r["prediction"] for r in kept], [r["target"] for r in kept], settings["metrics"])
    assert 0 < len(kept) < len(rows)
    assert len(memory["eval_res"]["f1"]) == len(kept)
    assert memory["eval_res"]["avg_f1"] == pytest.approx(expected["avg_f1"], abs=1e-12)
    assert memory["route"] == [r["answerability"] for r in rows]
