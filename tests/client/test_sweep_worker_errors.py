"""The error of a worker that ``ultra sweep --workers N`` forked reaches the user through the command
(``processes/forks.ForkedWorker``, ``shared.show_worker_errors``): printed once when every worker meets it (a study
that runs another sweep), named by its worker when it is that worker's alone, and a fault's traceback is not lost.
Each case runs ``ultra`` in a fresh Python process (never in pytest's, whose threads would make the fork unsafe)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.trec_sweep import write_trec_sweep

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the workers are forked on Linux")


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}  # the suite's read roots and output folder (conftest)


def ultra(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "ultra.py"), *args], cwd=folder, env=environment(),
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_a_study_that_runs_another_sweep_is_refused_once_for_every_worker(tmp_path: Path) -> None:
    project = write_trec_sweep(tmp_path)
    shared = ["--storage", f"journal:{project / 'study.journal'}", "--study", "s", "--metric", "eval_res.map"]
    first = ultra(project, "sweep", "pipes/trec.yaml", "--grid", "evaluation.max_depth=[5, 50]", *shared,
                  "--output-dir", "first")  # fmt: skip
    assert first.returncode == 0, first.stderr
    other = ultra(project, "sweep", "pipes/trec.yaml", "--grid", "evaluation.max_depth=[5, 60]", *shared,
                  "--workers", "2", "--output-dir", "other")  # fmt: skip
    assert other.returncode == 1 and "Traceback" not in other.stderr
    message = "evaluation.max_depth: the study has [5, 50], this worker [5, 60]"
    assert other.stderr.count(message) == 1, other.stderr  # both workers met it; the user reads it once
    assert "worker 2:" not in other.stderr


def test_a_workers_own_error_is_named_by_worker_and_a_fault_keeps_its_traceback(tmp_path: Path) -> None:
    """Two forked workers: one meets a user's mistake (a pipeline that is not there), printed by the command as
    that worker's unless it is the command's own line; the other a fault, whose traceback the command shows."""
    script = """
        import sys
        import ultra_client.cli as cli
        from ultra_client.sweep.processes.forks import ForkedWorker
        from ultra_client.sweep.shared import show_worker_errors

        mistaken = ForkedWorker(["sweep", "missing.yaml", "--metric", "eval_res.map"])
        real_main = cli.main
        def faulty(argv, errors):
            raise RuntimeError("a fault in the worker")
        cli.main = faulty
        broken = ForkedWorker(["sweep", "missing.yaml"])
        cli.main = real_main
        print("codes", mistaken.wait(), broken.wait(), flush=True)
        show_worker_errors([mistaken, broken], None)
        print("---", file=sys.stderr, flush=True)
        show_worker_errors([mistaken], mistaken.error_lines()[0])
        print("end", file=sys.stderr, flush=True)
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=tmp_path, env=environment(),
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.stdout.strip() == "codes 1 1", done.stdout + done.stderr
    shown, again = done.stderr.split("---\n")
    mistake = [line for line in shown.splitlines() if line.startswith("[ultra] worker 2: error: ")]
    assert len(mistake) == 1 and "missing.yaml" in mistake[0], shown
    fault = [line for line in shown.splitlines() if line.startswith("[ultra] worker 3: ")]
    assert fault[0] == "[ultra] worker 3: Traceback (most recent call last):", shown
    assert fault[-1] == "[ultra] worker 3: RuntimeError: a fault in the worker", shown
    assert again == "end\n"  # the command's own line is not printed again as the worker's
