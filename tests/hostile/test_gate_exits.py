"""Gates that cannot be evaluated exit 2, never 1 (issue 40, M1-M3), through the real CLI.

Exit 1 says "a condition failed"; a broken gate file, a non-finite result and an unwritable ``--junit`` must not
look like that to CI.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error, pipeline, toy  # noqa: F401 - toy is a fixture
from tests.hostile.test_run_folders import gate_file, refused, run_folder
from tests.support.background import Command, Finished, in_background

CONDITION = "{metric: eval_res.map, min: 0.1}"
MALFORMED = {
    "syntax error": ("gate: [\n", "gate.yaml"),
    "min .nan": ("gate:\n  - {metric: eval_res.map, min: .nan}\n", "'min' must be a finite number; got nan"),
    "max .inf": ("gate:\n  - {metric: eval_res.map, max: .inf}\n", "'max' must be a finite number; got inf"),
    "min high": ("gate:\n  - {metric: eval_res.map, min: high}\n", "'min' must be a finite number; got 'high'"),
    "empty list": ("gate: []\n", "'gate' must be a non-empty list of conditions"),
    "min above max": ("gate:\n  - {metric: eval_res.map, min: 0.9, max: 0.1}\n", "'min' (0.9) is above 'max' (0.1)"),
    "max_drop without baseline": (
        "gate:\n  - {metric: eval_res.map, max_drop: 0.1}\n",
        "'max_drop' and 'no_significant_drop' compare with a run",
    ),
}


def spare(prepare: Callable[..., Command], *values: str) -> list:
    """Each value's ``ultra gate`` (``prepare(folder, value)``) as a spare background run
    (tests/support/background.py)."""
    return [pytest.param(v, marks=in_background(functools.partial(prepare, value=v), spare=True)) for v in values]


def malformed_gate(folder: Path, value: str) -> Command:
    run = run_folder(folder, "run_20260101_101010")
    return Command(("gate", str(run), "--gate", str(gate_file(folder, MALFORMED[value][0]))), timeout=120, cwd=folder)


@pytest.mark.parametrize("case", spare(malformed_gate, *sorted(MALFORMED)))
def test_a_malformed_gate_file_exits_2(background_run: Finished, case: str) -> None:
    _, expected = MALFORMED[case]
    refused(background_run.done, 2, "gate.yaml", expected, "the gate cannot be evaluated")


def gate_path(folder: Path, where: str) -> str:
    return {"missing": str(folder / "none.yaml"), "a directory": str(folder), "/dev/zero": "/dev/zero"}[where]


def gate_not_a_file(folder: Path, value: str) -> Command:
    run = run_folder(folder, "run_20260101_101010")
    return Command(("gate", str(run), "--gate", gate_path(folder, value)), timeout=30, cwd=folder)


@pytest.mark.parametrize("where", spare(gate_not_a_file, "missing", "a directory", "/dev/zero"))
def test_a_gate_file_that_is_not_a_file_exits_2(background_run: Finished, where: str) -> None:
    refused(background_run.done, 2, gate_path(background_run.folder, where), "the gate cannot be evaluated")


def non_finite_result(folder: Path, value: str) -> Command:
    run = run_folder(folder, "run_20260101_101010", f'{{"eval_res": {{"map": {value}}}}}')
    gate = gate_file(folder, f"gate:\n  - {CONDITION}\n")
    return Command(("gate", str(run), "--gate", str(gate)), timeout=120, cwd=folder)


@pytest.mark.parametrize("value", spare(non_finite_result, "NaN", "Infinity", "-Infinity"))
def test_a_non_finite_result_exits_2(background_run: Finished, value: str) -> None:
    done = background_run.done
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ERROR" in done.stdout and "not a finite number: it cannot be evaluated" in done.stdout
    assert "exit status 2" in done.stdout


def test_a_non_finite_baseline_exits_2(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "run_20260101_101010")
    baseline = run_folder(tmp_path, "base_20260101_101010", '{"eval_res": {"map": NaN}}')
    gate = gate_file(tmp_path, f"gate:\n  - {{metric: eval_res.map, baseline: {baseline}, max_drop: 0.1}}\n")
    done = run_ultra("gate", str(folder), "--gate", str(gate), cwd=tmp_path)
    assert done.returncode == 2 and "the baseline's eval_res.map is nan" in done.stdout, done.stdout


def test_junit_a_directory_is_refused_before_the_gate_is_judged(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "run_20260101_101010")
    done = run_ultra("gate", str(folder), "--gate", str(gate_file(tmp_path)), "--junit", str(tmp_path), cwd=tmp_path)
    refused(done, 1, f"--junit {tmp_path}: is a folder")
    assert "condition" not in done.stdout  # no verdict table: nothing was judged


def test_junit_a_directory_is_refused_before_the_run_starts(toy: Path) -> None:  # noqa: F811 - the fixture
    flow = pipeline(toy, "flow", "  - toy.make_items\n", params="toy:\n  words: a b\n")
    (toy / "gate.yaml").write_text("gate:\n  - {metric: items, min: 0}\n")
    (toy / "reports").mkdir()
    done = run_ultra("run", str(flow), "--gate", "gate.yaml", "--junit", "reports", cwd=toy, timeout=60)
    clear_error(done, "--junit reports: is a folder")
    assert not (toy / "output").exists() or not any((toy / "output").iterdir())


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any folder")
def test_junit_in_a_read_only_folder_is_refused_first(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "run_20260101_101010")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    done = run_ultra("gate", str(folder), "--gate", str(gate_file(tmp_path)), "--junit", str(locked / "g.xml"),
                     cwd=tmp_path)  # fmt: skip
    refused(done, 1, "cannot be written")


@pytest.mark.parametrize("junit", ["", "gate.yaml", "./gate.yaml", "run_20260101_101010/memory.json"])
def test_junit_empty_or_a_file_the_gate_reads_is_refused_unwritten(tmp_path: Path, junit: str) -> None:
    """``--junit gate.yaml`` overwrote the gate file with the report (``memory.json`` likewise); ``--junit ''`` was
    ignored. Each is refused before the gate is judged, and the file is left as it was."""
    folder = run_folder(tmp_path, "run_20260101_101010")
    gate = gate_file(tmp_path)
    before = gate.read_text(), (folder / "memory.json").read_text()
    done = run_ultra("gate", str(folder.name), "--gate", "gate.yaml", "--junit", junit, cwd=tmp_path)
    refused(done, 1, "--junit is empty" if not junit else "which this command reads; give another file")
    assert (gate.read_text(), (folder / "memory.json").read_text()) == before


def test_junit_the_pipeline_itself_is_refused_before_the_run_starts(toy: Path) -> None:  # noqa: F811 - the fixture
    flow = pipeline(toy, "flow", "  - toy.make_items\n", params="toy:\n  words: a b\n")
    (toy / "gate.yaml").write_text("gate:\n  - {metric: items, min: 0}\n")
    before = flow.read_text()
    done = run_ultra("run", str(flow), "--gate", "gate.yaml", "--junit", str(flow), cwd=toy, timeout=60)
    clear_error(done, "which this command reads")
    assert flow.read_text() == before and not (toy / "output").exists()
