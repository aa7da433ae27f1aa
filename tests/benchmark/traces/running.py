"""``ultra run`` of a pipeline over trace files, as a user runs it: the run folder it made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT, run_ultra

ENV = {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1", "ULTRA_ALLOW_OUTSIDE_READS": "1"}  # the runs live in pytest's folders


def ultra_run(folder: Path, pipeline: dict[str, Any], params: dict[str, Any]) -> Path:
    """``pipeline`` run with ``params`` (both written to ``folder``); its one run folder (the run must pass)."""
    (folder / "p.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    (folder / "pipe.yaml").write_text(yaml.safe_dump(pipeline), encoding="utf-8")
    done = run_ultra(
        "run", str(folder / "pipe.yaml"), "--param", str(folder / "p.yaml"), "--output-dir", str(folder / "runs"),
        cwd=ROOT, env=ENV, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = (folder / "runs").glob("pipe_*")
    return run
