"""What every ``ultra export`` tracker logs of a run folder, read once and tracker-neutral (``mlflow``, ``wandb``).

A finished run folder of ``ultra run`` gives: its pipeline, start and duration, every finite scalar result under
``ultra sweep --metric``'s names plus ``failed_fraction``, and its ``parameters.yaml`` as written (a ``${VAR}``
stays the reference, never its value). The git commit is the working directory's, when it is a checkout.
"""

from __future__ import annotations

import math
import re
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from ultra_client.errors import UltraError


@dataclass(frozen=True)
class FinishedRun:
    """A finished run folder as the trackers log it."""

    folder: Path
    pipeline: str
    started: datetime  # from the folder's name (local time, as ``ultra run`` named it)
    duration: float | None  # seconds, from ``timings.json``
    metrics: dict[str, float]  # every finite scalar result and ``failed_fraction``
    parameters: dict[str, Any]  # the run's ``parameters.yaml``, unexpanded


def finished_runs(folders: list[str]) -> list[FinishedRun]:
    """Each named folder read as a finished run; an ``UltraError`` naming the first that is not one."""
    from ultra_client.gates import FAILED_FRACTION
    from ultra_client.gates.verdict import read_run
    from ultra_client.runs.index import describe_folder

    runs = []
    for name in folders:
        folder = Path(name)
        row = describe_folder(folder.resolve()) if folder.is_dir() else None
        if row is None or row["status"] != "ok":
            raise UltraError(f"{folder}: not a finished run folder of ultra run (<pipeline>_<date>_<time>/memory.json)")
        results = read_run(folder)
        values = {**results.scalars, FAILED_FRACTION: results.value(FAILED_FRACTION)}
        metrics = {key: float(value) for key, value in values.items() if value is not None and math.isfinite(value)}
        started = datetime.fromisoformat(row["started"])
        runs.append(FinishedRun(folder, row["pipeline"], started, row["duration"], metrics, parameters(folder)))
    return runs


def parameters(folder: Path) -> dict[str, Any]:
    """The run folder's ``parameters.yaml`` as a mapping (``{}`` if missing or not a mapping)."""
    try:
        data = yaml.safe_load((folder / "parameters.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def git_commit(where: Path) -> str | None:
    """The commit checked out at ``where``, if it is in a git checkout."""
    try:
        done = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", commit) else None
