"""``--timeout`` and ``--deadline``: refused unless a positive number; options anywhere; a whole-run deadline."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error, pipeline
from tests.support.background import Command, Finished, Prepare, in_background
from tests.support.together import at_once

BOXED = 'ans_ls=["so \\\\boxed{42}"]'


def spare(*args: str) -> Prepare:
    """``ultra ARGS`` in ``folder``: a spare background run (tests/support/background.py)."""
    return lambda folder: Command(args, timeout=120, cwd=folder)


def timeout_cases() -> list:
    cases = []
    for command in ("run", "call"):  # ids as two stacked parametrize marks gave them: [run-0] ... [call-inf]
        target = ["examples/none.yaml"] if command == "run" else ["custom.output_extract_from_boxed", BOXED]
        cases += [pytest.param(command, value, marks=in_background(spare(command, *target, f"--timeout={value}"),
                                                                   spare=True), id=f"{command}-{value}")
                  for value in ("0", "-1", "nan", "inf")]  # fmt: skip
    return cases


@pytest.mark.parametrize(("command", "value"), timeout_cases())
def test_timeout_must_be_a_positive_number(background_run: Finished, command: str, value: str) -> None:
    result = background_run.done
    clear_error(result, f"--timeout must be a positive number of seconds, e.g. --timeout 60; got {value}")


@pytest.mark.parametrize("value", [pytest.param(value, marks=in_background(spare("run", "examples/none.yaml",
                                   "--deadline", value), spare=True)) for value in ("0", "nan")])  # fmt: skip
def test_deadline_must_be_a_positive_number(background_run: Finished, value: str) -> None:
    result = background_run.done
    clear_error(result, f"--deadline must be a positive number of seconds, e.g. --deadline 60; got {value}")


def test_call_options_before_or_after_the_values(tmp_path: Path) -> None:
    outputs = []
    orders = (["--timeout", "60", BOXED], [BOXED, "--timeout", "60"])
    ran = at_once({i: lambda order=order: run_ultra("call", "custom.output_extract_from_boxed", *order, cwd=tmp_path)
                   for i, order in enumerate(orders)})  # both calls at once  # fmt: skip
    for i in range(len(orders)):
        result = ran[i]
        assert result.returncode == 0, result.stderr
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1] and outputs[0]["pred_ls"] == ["42"]


def test_call_unknown_option_after_values_is_still_refused(tmp_path: Path) -> None:
    result = run_ultra("call", "custom.output_extract_from_boxed", BOXED, "--bogus", cwd=tmp_path)
    assert result.returncode == 2 and "unrecognized arguments: --bogus" in result.stderr


def _processes_in(folder: Path) -> list[int]:
    """Processes whose working directory is ``folder`` (the servers ultra started there)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and Path(os.readlink(entry / "cwd")) == folder:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_deadline_stops_the_whole_run(toy: Path) -> None:
    # a nap far longer than any start-up on a busy machine: stopped at the deadline, never slept out
    flow = pipeline(toy, "slow", "  - toy.make_items\n  - toy.nap\n", "toy:\n  words: a\n  seconds: 900\n")
    started = time.perf_counter()
    result = run_ultra("run", str(flow), "--deadline", "4", cwd=toy, timeout=900)
    elapsed = time.perf_counter() - started
    clear_error(result, "pipes/slow.yaml: the run passed its --deadline of 4 s and was stopped", "no memory.json")
    assert 4 <= elapsed < 450  # about 5 s on a quiet machine; the nap alone would take 900 s
    (folder,) = [p for p in (toy / "output").iterdir() if p.is_dir()]  # not the run index
    assert not (folder / "memory.json").exists()
    assert _processes_in(toy.resolve()) == []


def test_deadline_not_reached_changes_nothing(toy: Path) -> None:
    flow = pipeline(toy, "quick", "  - toy.make_items\n", "toy:\n  words: a b\n")
    result = run_ultra("run", str(flow), "--deadline", "100", cwd=toy)
    assert result.returncode == 0, result.stderr
    (folder,) = [p for p in (toy / "output").iterdir() if p.is_dir()]  # not the run index
    assert json.loads((folder / "memory.json").read_text())["items"] == ["a", "b"]
