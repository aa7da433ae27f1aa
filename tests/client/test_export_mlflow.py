"""``ultra export mlflow``: a run folder logged to a local ``file:`` store and read back with MLflow's client."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.client.test_gates import run_gated
from tests.conftest import ROOT, run_ultra
from tests.support.extras import requires

pytestmark = requires("mlflow", "the mlflow extra is not installed: pip install 'ultra-eval[mlflow]'")


def test_a_run_round_trips_through_an_mlflow_file_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow.tracking import MlflowClient

    done, folder = run_gated(tmp_path)
    assert done.returncode == 0, done.stderr
    store = f"file:{tmp_path / 'mlruns'}"
    args = ("export", "mlflow", str(folder), "--tracking-uri", store, "--experiment", "nightly")
    exported = run_ultra(*args, cwd=ROOT)
    assert exported.returncode == 0, exported.stderr
    run_id = exported.stdout.strip().rsplit(" ", 1)[1]

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = MlflowClient(tracking_uri=store)
    run = client.get_run(run_id)
    assert client.get_experiment(run.info.experiment_id).name == "nightly"
    assert run.info.run_name == folder.name and run.info.status == "FINISHED"
    memory = json.loads((folder / "memory.json").read_text())
    metrics = run.data.metrics
    assert metrics["eval_res.map"] == pytest.approx(memory["eval_res"]["map"], abs=1e-12)
    assert metrics["eval_res.ndcg_at_10"] == pytest.approx(memory["eval_res"]["ndcg@10"], abs=1e-12)
    assert metrics["counts.num_q"] == memory["counts"]["num_q"] and metrics["failed_fraction"] == 0
    expected = {f"eval_res.{k}" for k in memory["eval_res"]} | {f"counts.{k}" for k in memory["counts"]}
    names = json.loads(run.data.tags["ultra.metric_names"])
    assert {names.get(key, key) for key in metrics} == expected | {"failed_fraction"}
    params = run.data.params
    assert params["evaluation.relevance_level"] == "1"
    assert params["evaluation.ir_metrics"] == "[mrr, map, recall, ndcg, precision]"
    assert params["evaluation.save_path"] == str(tmp_path / "evaluation")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert run.data.tags["mlflow.source.git.commit"] == commit.strip()
    assert run.data.tags["ultra.pipeline"] == "eval_trec"
    artifacts = {a.path for a in client.list_artifacts(run_id)}
    assert {"memory.json", "parameters.yaml", "timings.json", "files"} <= artifacts
    (result,) = [a.path for a in client.list_artifacts(run_id, "files")]
    local = Path(client.download_artifacts(run_id, result, str(tmp_path / "back")))
    assert local.read_bytes() == (folder / result).read_bytes()


def test_a_folder_that_is_not_a_finished_run_is_refused(tmp_path: Path) -> None:
    (tmp_path / "eval_trec_20261126_101010").mkdir()
    done = run_ultra("export", "mlflow", str(tmp_path / "eval_trec_20261126_101010"), cwd=tmp_path)
    assert done.returncode == 1 and "not a finished run folder of ultra run" in done.stderr
    assert not (tmp_path / "mlruns").exists()
