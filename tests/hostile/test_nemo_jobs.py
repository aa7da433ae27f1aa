"""NeMo jobs read within the limits of the files people write (issue 40, major 3; M10, M11), through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.hostile.test_run_folders import refused
from tests.support.background import Command, Finished, in_background

EXAMPLES = ROOT / "examples" / "compat" / "nemo"


@pytest.fixture
def jobs(tmp_path: Path) -> Path:
    """A copy of the shipped NeMo examples (jobs and their data)."""
    shutil.copytree(EXAMPLES, tmp_path / "nemo")
    return tmp_path / "nemo"


def test_a_job_nested_200000_deep_is_refused(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text('{"type": "rag", "tasks": ' + "[" * 200_000 + "]" * 200_000 + "}")
    refused(run_ultra("build", "deep.json", cwd=tmp_path), 1, "deep.json:1: JSON nested deeper than 100 levels")


def test_a_30_mb_job_is_refused_unread(tmp_path: Path) -> None:
    job = json.loads((EXAMPLES / "beir_standard.json").read_text())
    job["padding"] = "x" * 30_000_000
    (tmp_path / "big.json").write_text(json.dumps(job))
    done = run_ultra("build", "big.json", cwd=tmp_path)
    refused(done, 1, "big.json: the file is 30,00", "more than the 1,048,576 bytes a NeMo job file may have")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("judge_timeout", "NaN", "expected a finite number of seconds > 0, got NaN"),
        ("judge_timeout", "Infinity", "expected a finite number of seconds > 0, got Infinity"),
        ("judge_max_retries", "2.5", "judge_llm.max_retries must be a whole number >= 0, got 2.5"),
        ("judge_max_workers", "true", "judge_llm.max_workers must be a whole number >= 1, got true"),
    ],
)
def test_a_non_finite_or_fractional_limit_is_refused(jobs: Path, key: str, value: str, expected: str) -> None:
    text = (jobs / "beir_standard.json").read_text()
    old = {"judge_timeout": '"judge_timeout": 300', "judge_max_retries": '"judge_max_retries": 5',
           "judge_max_workers": '"judge_max_workers": 16'}[key]  # fmt: skip
    (jobs / "bad.json").write_text(text.replace(old, f'"{key}": {value}'))
    refused(run_ultra("build", "bad.json", cwd=jobs), 1, f"$.tasks.my-beir-task.params.{key}", expected)


def nemo_estimate(folder: Path) -> Command:
    """``ultra run JOB --estimate`` in a copy of the shipped NeMo examples: a background run."""
    shutil.copytree(EXAMPLES, folder / "nemo")
    return Command(("run", "beir_standard.json", "--estimate"), timeout=300, env={"NVIDIA_API_KEY": ""},
                   cwd=folder / "nemo")  # fmt: skip


@in_background(nemo_estimate)
def test_estimate_understands_a_nemo_job(background_run: Finished) -> None:
    done, jobs = background_run.done, background_run.folder / "nemo"
    assert done.returncode == 0, done.stderr
    assert "unknown top-level keys" not in done.stderr
    assert "judge.faithfulness" in done.stdout and "total" in done.stdout
    assert not list(jobs.rglob("memory.json"))  # an estimate, not a run
