"""What every ``ultra export`` tracker logs of a run folder, read once and tracker-neutral (``mlflow``, ``wandb``).

A finished run folder of ``ultra run`` gives: its pipeline, start and duration, every finite scalar result under
``ultra sweep --metric``'s names plus ``failed_fraction``, and its ``parameters.yaml`` as written (a ``${VAR}``
stays the reference, never its value). The git commit is the working directory's, when it is a checkout.

The folder is logged whole as artifacts, so it must hold only files and folders: a link that leaves it (a
folder downloaded from CI may hold ``notes.txt -> ~/.ssh/id_rsa``), a link to a folder, a pipe or a device is
refused before anything is logged, as the trackers would upload or read what the link points at.
"""

from __future__ import annotations

import math
import re
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

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
    """Each named folder read as a finished run; an ``UltraError`` naming the first that is not one, or the file
    of it that cannot be read and why (``ultra_client.runs.records``), before anything is logged."""
    from ultra_client.gates import FAILED_FRACTION
    from ultra_client.gates.verdict import read_run
    from ultra_client.runs.index import run_start
    from ultra_client.runs.records import UnreadableRecord, optional_json_record, read_parameters

    runs = []
    for name in folders:
        folder = Path(name)
        named = run_start(folder.resolve().name) if folder.is_dir() else None
        if named is None or not (folder / "memory.json").exists():
            raise UltraError(f"{folder}: not a finished run folder of ultra run (<pipeline>_<date>_<time>/memory.json)")
        try:
            results = read_run(folder)
            settings = read_parameters(folder)
        except FileNotFoundError as exc:  # no memory.json, or one that cannot be read
            raise UltraError(f"{exc}; nothing was exported") from None
        except UnreadableRecord as exc:
            raise UltraError(f"{exc}; nothing was exported") from None
        _only_files(folder)
        values = {**results.scalars, FAILED_FRACTION: results.value(FAILED_FRACTION)}
        metrics = {key: float(value) for key, value in values.items() if value is not None and math.isfinite(value)}
        timings = optional_json_record(folder / "timings.json", "run timings")
        duration = timings.get("total_seconds") if isinstance(timings, dict) else None
        duration = float(duration) if isinstance(duration, (int, float)) and math.isfinite(duration) else None
        runs.append(FinishedRun(folder, named[0], datetime.fromisoformat(named[1]), duration, metrics, settings))
    return runs


def _only_files(folder: Path) -> None:
    """An ``UltraError`` naming the first entry of ``folder`` the trackers must not log: a link out of the folder
    or to anything but a file, a pipe, a socket or a device (links are never followed into folders)."""
    import os
    import stat

    inside = folder.resolve()
    for parent, folders, files in os.walk(folder):
        for name in [*folders, *files]:
            path = Path(parent) / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                target = Path(os.path.realpath(path))  # a loop of links resolves to a path that is no file
                if not target.is_relative_to(inside) or not target.is_file():
                    where = "outside the run folder" if not target.is_relative_to(inside) else "something not a file"
                    raise UltraError(
                        f"{path}: a link to {where}; the trackers would upload what it points at. "
                        "Copy the file into the folder or remove the link; nothing was exported"
                    )
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise UltraError(f"{path}: not a file or a folder (a pipe, socket or device); remove it, "
                                 "nothing was exported")  # fmt: skip


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
