"""Helpers of the NeMo job tests: a copy of examples/compat/nemo/ in a temporary folder, jobs edited from it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT, run_ultra

EXAMPLES = ROOT / "examples/compat/nemo"
CONFIGS = ("beir_standard", "custom_data", "ragas_answers", "openai_judge")


def copy_examples(tmp_path: Path) -> Path:
    """examples/compat/nemo/ (jobs, data, offline.yaml) copied to ``tmp_path/nemo``, without compiled files."""
    folder = tmp_path / "nemo"
    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns("compiled"))
    return folder


def env_for(tmp_path: Path, **more: str) -> dict[str, str]:
    """Tools may read the copied data, write under tmp_path; no key of the machine leaks in."""
    return {"ULTRA_READ_ROOTS": str(tmp_path), "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1", **more}


def edited_job(folder: Path, name: str, new_name: str, edit) -> Path:
    """A copy of job ``name`` with ``edit(job)`` applied to its parsed JSON (the task as its argument too)."""
    job = json.loads((folder / f"{name}.json").read_text())
    (task,) = job["tasks"].values()
    edit(job, task)
    path = folder / f"{new_name}.json"
    path.write_text(json.dumps(job, indent=1))
    return path


def ultra(*args: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    return run_ultra(*args, cwd=ROOT, env=env_for(tmp_path, **env), timeout=300)


def run_job(job: Path, tmp_path: Path, *extra: str, **env: str) -> Path:
    """``ultra run job.json`` into tmp_path/runs; the run folder."""
    result = ultra("run", str(job), "--output-dir", str(tmp_path / "runs"), *extra, tmp_path=tmp_path, **env)
    assert result.returncode == 0, result.stderr[-3000:]
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    return folder
