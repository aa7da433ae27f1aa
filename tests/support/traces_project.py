"""A project folder holding one of the traces examples (``examples/<name>.yaml``, its parameter file) and
``data/traces``, so that ``ultra run`` writes its run folder under the test's own temporary folder."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import ROOT


def traces_example_project(tmp_path: Path, name: str) -> Path:
    """``tmp_path/project`` with ``examples/<name>.yaml``, its parameter file and a copy of ``data/traces``."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "data/traces", project / "data/traces")
    (project / "examples/parameters").mkdir(parents=True)
    for file in (f"examples/{name}.yaml", f"examples/parameters/{name}_parameter.yaml"):
        shutil.copy(ROOT / file, project / file)
    return project
