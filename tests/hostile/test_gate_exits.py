"""Gates that cannot be evaluated exit 2, never 1 (issue 40, M1-M3), through the real CLI.

Exit 1 says "a condition failed"; a broken gate file, a non-finite result and an unwritable ``--junit`` must not
look like that to CI.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error, pipeline, toy  # noqa: F401 - toy is a fixture
from tests.hostile.test_run_folders import gate_file, refused, run_folder

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


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_gate_file_exits_2(tmp_path: Path, case: str) -> None:
    text, expected = MALFORMED[case]
    folder = run_folder(tmp_path, "run_20260101_101010")
    done = run_ultra("gate", str(folder), "--gate", str(gate_file(tmp_path, text)), cwd=tmp_path)
    refused(done, 2, "gate.yaml", expected, "the gate cannot be evaluated")


@pytest.mark.parametrize("where", ["missing", "a directory", "/dev/zero"])
def test_a_gate_file_that_is_not_a_file_exits_2(tmp_path: Path, where: str) -> None:
    folder = run_folder(tmp_path, "run_20260101_101010")
    path = {"missing": str(tmp_path / "none.yaml"), "a directory": str(tmp_path), "/dev/zero": "/dev/zero"}[where]
    done = run_ultra("gate", str(folder), "--gate", path, cwd=tmp_path, timeout=30)
    refused(done, 2, path, "the gate cannot be evaluated")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_result_exits_2(tmp_path: Path, value: str) -> None:
    folder = run_folder(tmp_path, "run_20260101_101010", f'{{"eval_res": {{"map": {value}}}}}')
    done = run_ultra("gate", str(folder), "--gate", str(gate_file(tmp_path, f"gate:\n  - {CONDITION}\n")), cwd=tmp_path)
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
