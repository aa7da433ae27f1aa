"""Hostile input for the ``ultra`` client: a temporary project with the toy server, run through the real CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.client.conftest import TOY_SOURCE
from tests.conftest import ROOT

HERE = Path(__file__).parent


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """``tmp/toyservers/toy`` is the toy server package; pipelines go in ``tmp/pipes``."""
    return toy_folder(tmp_path)


def toy_folder(folder: Path) -> Path:
    """What the ``toy`` fixture makes, in ``folder`` (a background run's, say)."""
    shutil.copytree(TOY_SOURCE, folder / "toyservers" / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "pipes" / "parameters").mkdir(parents=True)
    return folder


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


def umbrela_pipeline(project: Path, judge_llm: dict) -> None:
    """``pipes/judge.yaml`` (one umbrela_judge step on the sample data, depth 1, no cache) and its
    ``params.yaml`` in ``project``, with ``judge_llm`` as given: for ``ultra run ... --param params.yaml``."""
    (project / "pipes").mkdir()
    (project / "pipes" / "judge.yaml").write_text(
        "servers:\n  judge: servers/judge\npipeline:\n  - judge.umbrela_judge\n"
    )
    judge = {
        "judge_llm": judge_llm,
        "queries_path": str(ROOT / "data/umbrela/queries.jsonl"),
        "run_path": str(ROOT / "data/umbrela/run.bm25.trec"),
        "corpus_path": str(ROOT / "data/umbrela/corpus.jsonl"),
        "depth": 1,
        "judge_cache": "",
        "save_path": str(project / "judged"),
    }
    (project / "params.yaml").write_text(json.dumps({"judge": judge}))
