"""``ultra run --estimate`` needs no API key and leaves nothing behind: no cache file, no folder."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from pathlib import Path

import yaml

from tests.conftest import ROOT, run_ultra

UNSET = "ULTRA_TEST_KEY_NOBODY_SET"


def project_with_umbrela(tmp_path: Path) -> tuple[Path, Path]:
    """A project folder holding examples/umbrela.yaml, its data and a parameter file whose key is unset."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "data" / "umbrela", project / "data" / "umbrela")
    shutil.copy(ROOT / "examples" / "umbrela.yaml", project / "umbrela.yaml")
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "umbrela_parameter.yaml").read_text("utf-8"))
    params["judge"]["judge_llm"]["api_key"] = "${" + UNSET + "}"
    param_file = project / "umbrela_parameter.yaml"
    param_file.write_text(yaml.safe_dump(params), encoding="utf-8")
    return project, param_file


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``folder``: (size, mtime in ns)."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


def test_an_estimate_without_the_key_runs_and_writes_nothing(tmp_path: Path) -> None:
    project, param_file = project_with_umbrela(tmp_path)
    before = snapshot(project)
    env = {k: v for k, v in os.environ.items() if k != UNSET}
    result = run_ultra("run", "umbrela.yaml", "--param", str(param_file), "--estimate", cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())
    assert "judge.umbrela_judge" in result.stdout and f"{UNSET} not set" in said and "a run needs it" in said
    assert snapshot(project) == before  # no output/, no judge_cache.sqlite, nothing else


def test_an_estimate_of_recorded_judgments_counts_no_request_and_says_no_key_is_needed(tmp_path: Path) -> None:
    """examples/judge_calibration.yaml as shipped reads MT-RAG's recorded scores: nothing would be sent."""
    params = yaml.safe_load((ROOT / "examples/parameters/judge_calibration_parameter.yaml").read_text("utf-8"))
    params["judge"]["judge_llm"]["api_key"] = "${" + UNSET + "}"
    param_file = tmp_path / "p.yaml"
    param_file.write_text(yaml.safe_dump(params), encoding="utf-8")
    result = run_ultra("run", "examples/judge_calibration.yaml", "--param", str(param_file), "--estimate", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())
    assert re.search(r"judge\.faithfulness +\S+ +0 ", result.stdout), result.stdout
    assert f"{UNSET} not set: an estimate sends nothing, so it ran without; no step would send a request" in said


def test_an_estimate_reads_an_existing_cache_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    project, param_file = project_with_umbrela(tmp_path)
    cache = project / "output" / "judge_cache.sqlite"
    cache.parent.mkdir()
    with sqlite3.connect(cache) as db:  # the cache's own schema, made by the client that writes it
        from ultra_llm.cache import SCHEMA

        db.execute(SCHEMA)
    db.close()
    before = snapshot(project)
    result = run_ultra("run", "umbrela.yaml", "--param", str(param_file), "--estimate", cwd=project,
                       env={UNSET: "sk-test"})  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert snapshot(project) == before  # the same bytes and times; no -wal or -shm beside it
