"""Where ``ultra`` writes: unwritable places are clear errors, and run folders are reserved atomically."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import clear_error, pipeline
from tests.support.together import at_once

FLOW = "  - toy.make_items\n  - toy.append_mark\n"
PARAMS = "toy:\n  words: a b\n  mark: '!'\n"


def test_output_dir_that_is_a_file(toy: Path) -> None:
    flow = pipeline(toy, "flow", FLOW, PARAMS)
    (toy / "taken").write_text("a file", encoding="utf-8")
    result = run_ultra("run", str(flow), "--output-dir", "taken", cwd=toy)
    clear_error(result, "--output-dir taken: cannot create a run folder there (it is a file, not a folder)")
    assert (toy / "taken").read_text() == "a file"


def test_output_dir_under_proc(toy: Path) -> None:
    flow = pipeline(toy, "flow", FLOW, PARAMS)
    clear_error(run_ultra("run", str(flow), "--output-dir", "/proc/x", cwd=toy), "--output-dir /proc/x: cannot create")


def test_build_cannot_write_its_parameter_file(toy: Path) -> None:
    flow = pipeline(toy, "flow", FLOW)
    (toy / "pipes" / "parameters").rmdir()
    (toy / "pipes" / "parameters").write_text("not a folder", encoding="utf-8")
    commands = ("build", "run")  # run builds first when the parameter file is missing; both refused, at once
    ran = at_once({command: lambda command=command: run_ultra(command, str(flow), cwd=toy) for command in commands})
    for command in commands:
        clear_error(ran[command], "pipes/parameters/flow_parameter.yaml: cannot write the parameter file")
    assert (toy / "pipes" / "parameters").read_text() == "not a folder"


def test_run_folder_taken_in_the_same_second_gets_a_suffix(toy: Path) -> None:
    """Another run holds every name of the next minute (dangling links: `exists()` says no, mkdir says taken)."""
    flow = pipeline(toy, "flow", FLOW, PARAMS)
    output = toy / "output"
    output.mkdir()
    now = datetime.now()
    for second in range(60):
        stamp = (now + timedelta(seconds=second)).strftime("%Y%m%d_%H%M%S")
        (output / f"flow_{stamp}").symlink_to(toy / "elsewhere" / stamp)
    result = run_ultra("run", str(flow), cwd=toy)
    assert result.returncode == 0, result.stderr
    (folder,) = [p for p in output.iterdir() if not p.is_symlink() and p.is_dir()]  # not the run index
    assert folder.name.startswith("flow_") and folder.name.endswith("_2")
    assert json.loads((folder / "memory.json").read_text())["items"] == ["a!", "b!"]
    assert not (toy / "elsewhere").exists()


def test_two_runs_started_at_once_get_two_folders(toy: Path) -> None:
    flow = pipeline(toy, "flow", FLOW, PARAMS)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(ROOT / "ultra.py"), "run", str(flow)]
    runs = [subprocess.Popen(command, cwd=toy, env=env, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errors = [run.communicate(timeout=120)[1] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], errors
    folders = sorted(p for p in (toy / "output").iterdir() if p.is_dir())  # not the run index
    assert len(folders) == 2
    for folder in folders:
        assert json.loads((folder / "memory.json").read_text())["items"] == ["a!", "b!"]
