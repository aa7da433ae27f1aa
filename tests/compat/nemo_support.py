"""Helpers of the NeMo job tests: a copy of examples/compat/nemo/ in a temporary folder, jobs edited from it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import yaml

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


def run_job(job: Path, tmp_path: Path, overlay: dict | None = None) -> Path:
    """``ultra run job.json --param OVERLAY`` into tmp_path/runs; the run folder. The overlay puts every file the
    tools write under tmp_path (no cache), with ``overlay``'s sections laid over that."""
    settings = {
        "retriever": {"index_path": str(tmp_path / "index"), "save_path": str(tmp_path / "retriever")},
        "generation": {"save_path": str(tmp_path / "generation"), "generation_cache": ""},
        "evaluation": {"save_path": str(tmp_path / "evaluation")},
        "judge": {"save_path": str(tmp_path / "judge"), "judge_cache": ""},
    }
    for alias, values in (overlay or {}).items():
        settings.setdefault(alias, {}).update(values)
    path = tmp_path / "overlay.yaml"
    path.write_text(yaml.safe_dump(settings))
    result = ultra("run", str(job), "--output-dir", str(tmp_path / "runs"), "--param", str(path), tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    return folder
