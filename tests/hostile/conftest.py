"""Hostile input for the ``ultra`` client: a temporary project with the toy server, run through the real CLI."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.client.conftest import TOY_SOURCE

HERE = Path(__file__).parent


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """``tmp/toyservers/toy`` is the toy server package; pipelines go in ``tmp/pipes``."""
    shutil.copytree(TOY_SOURCE, tmp_path / "toyservers" / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "pipes" / "parameters").mkdir(parents=True)
    return tmp_path


def pipeline(project: Path, name: str, steps_yaml: str, params: str | None = None) -> Path:
    """Write ``pipes/<name>.yaml`` on the toy server, and its parameter file when ``params`` is given."""
    path = project / "pipes" / f"{name}.yaml"
    path.write_text("servers:\n  toy: toyservers/toy\npipeline:\n" + steps_yaml, encoding="utf-8")
    if params is not None:
        (project / "pipes" / "parameters" / f"{name}_parameter.yaml").write_text(params, encoding="utf-8")
    return path


def clear_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    """Exit 1, one ``error:`` line first (besides [ultra] lines), no traceback, every fragment present."""
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("[ultra]")]
    assert lines and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
