"""``ultra sweep --stdio`` over a target setting: each trial's parameter file reaches the servers it starts, so
a key only a parameter file may set (``target.function``, set in the sweep's file only) is trusted over MCP,
as under ``ultra run --stdio``; ``target.settings.top_k`` reaches the function. Real subprocesses, offline."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import ROOT
from tests.support.background import Command, Finished, in_background

PIPELINE = ROOT / "examples/eval_target_python.yaml"


def stdio_sweep(tmp_path: Path) -> Command:
    """The sweep, in ``tmp_path`` (it runs in the background: tests/support/background.py)."""
    loaded = yaml.safe_load((ROOT / "examples/parameters/eval_target_python_parameter.yaml").read_text())
    loaded["benchmark"]["benchmark"].update(path=str(ROOT / "data/rag/questions.jsonl"), limit=40)
    loaded["target"]["target"]["function"] = f"{ROOT / 'examples/targets/rag.py'}:answer"  # pinned: a file's only
    loaded["target"]["target"]["settings"] = {"top_k": 5}
    loaded["target"]["save_path"] = str(tmp_path / "target")
    loaded["evaluation"]["qrels_path"] = loaded["custom"]["qrels_path"] = str(ROOT / "data/rag/qrels.trec")
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(loaded))
    args = ("--param", str(params), "--grid", "target.target.settings.top_k=[1, 10]", "--stdio",
            "--metric", "retrieval_scores.ndcg@10", "--output-dir", str(tmp_path / "sw"))  # fmt: skip
    return Command(("sweep", str(PIPELINE), *args), timeout=600, env={"ULTRA_READ_ROOTS": str(ROOT)}, cwd=tmp_path)


@in_background(stdio_sweep)
def test_a_stdio_sweep_passes_each_trials_parameter_file_to_its_servers(background_run: Finished) -> None:
    done, tmp_path = background_run.done, background_run.folder
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused" not in done.stdout + done.stderr
    rows = {
        row["target.target.settings.top_k"]: row for row in json.loads((tmp_path / "sw/sweep.json").read_text())["rows"]
    }
    assert rows[10]["retrieval_scores.ndcg@10"] > rows[1]["retrieval_scores.ndcg@10"] > 0  # top_k reached the system
    (logs,) = [p for p in (tmp_path / "sw/logs").glob("target.stderr.log")]  # the target ran as a subprocess
    (trial_file,) = list((tmp_path / "sw/logs").glob("trial_parameters.*.yaml"))
    assert yaml.safe_load(trial_file.read_text())["target"]["target"]["function"].endswith("rag.py:answer")
