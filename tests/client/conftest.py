"""A temporary project holding the toy server, for end-to-end client tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ultra_client.cli import main as ultra_main

TOY_SOURCE = Path(__file__).parent / "toy_server"


@pytest.fixture
def toy_project(tmp_path: Path) -> Path:
    """``tmp/toyservers/toy`` is the toy server package; pipelines go in ``tmp/pipes``."""
    return toy_copy(tmp_path)


def toy_copy(folder: Path) -> Path:
    """``folder`` as ``toy_project`` makes it (for module fixtures, which have no ``tmp_path``)."""
    shutil.copytree(TOY_SOURCE, folder / "toyservers" / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "pipes").mkdir()
    return folder


def write_pipeline(project: Path, name: str, steps_yaml: str) -> Path:
    """Write ``pipes/<name>.yaml`` using the toy server; ``steps_yaml`` is the indented step list."""
    path = project / "pipes" / f"{name}.yaml"
    path.write_text("servers:\n  toy: toyservers/toy\npipeline:\n" + steps_yaml, encoding="utf-8")
    return path


@pytest.fixture
def ultra(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Run the ``ultra`` command in this process (servers are still real subprocesses)."""

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd)
        code = ultra_main(list(args))
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, captured.out, captured.err)

    return run
