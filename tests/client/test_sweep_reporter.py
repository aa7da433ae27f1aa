"""``ultra sweep --workers N``' report is made by a process forked as the command starts
(``processes/reporter.py``): the table and files are those the command would make itself; its failure is the
command's error; a report process that ends without an answer leaves the report to the command. Each case runs
``ultra`` in a fresh Python process of its own (a script), never in pytest's, whose threads would make the fork
unsafe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.trec_sweep import write_trec_sweep

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the report process is forked on Linux")


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}  # the suite's read roots and output folder (conftest)


SWEEP = ["sweep", "pipes/trec.yaml", "--grid", "evaluation.max_depth=[5, 50, null]", "--metric", "eval_res.map"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An evaluation-only pipeline on the TREC sample, whose trials take a tenth of a second."""
    return write_trec_sweep(tmp_path)


def sweep_in_script(folder: Path, workers: int, output: str, patch: str = "") -> subprocess.CompletedProcess:
    """``ultra sweep --workers W`` through ``cli.main`` in a new Python process, after ``patch``; then whether that
    process imported matplotlib, and its children left unreaped (none: ``[]``)."""
    body = f"""
        import os, sys
        from ultra_client import cli
        {textwrap.indent(textwrap.dedent(patch), " " * 8).strip()}
        code = cli.main({json.dumps([*SWEEP, "--workers", str(workers), "--output-dir", output])})
        left = []
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    left.append("running")
                    break
                left.append(pid)
        except ChildProcessError:
            pass
        print("code", code, "matplotlib", "matplotlib" in sys.modules, "left", left)
        """
    path = folder / f"case_{output}.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return subprocess.run([sys.executable, str(path)], cwd=folder, env=environment(), capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def table_of(stdout: str) -> list[str]:
    """The printed table's rows without the seconds column (a trial's time differs between runs)."""
    lines = [line for line in stdout.splitlines() if line.startswith(("rank", "1", "2", "3"))]
    return [" ".join(line.split()[:5]) for line in lines]


def test_the_report_process_makes_the_report_the_command_would(project: Path) -> None:
    """Two workers: the table, sweep.json and plots as one worker's, made by another process (the command never
    imports matplotlib) at a lower priority than the workers', which is reaped; one worker makes its report
    itself."""
    patch = """
        from ultra_client.sweep import report
        warm = report.warm
        def recorded():
            with open("warmed.txt", "a") as out:
                out.write(f"{os.getpid()} {os.nice(0)}\\n")
            warm()
        report.warm = recorded
        print("command", os.getpid(), os.nice(0))
    """
    two = sweep_in_script(project, 2, "two", patch)
    one = sweep_in_script(project, 1, "one")
    assert two.returncode == 0 and one.returncode == 0, two.stderr + one.stderr
    assert two.stdout.splitlines()[-1] == "code 0 matplotlib False left []", two.stdout
    _, command, niceness = two.stdout.splitlines()[0].split()
    [(pid, warmed)] = [line.split() for line in (project / "warmed.txt").read_text().splitlines()]
    assert pid != command and int(warmed) == min(int(niceness) + 10, 19), (command, pid, warmed)
    assert one.stdout.splitlines()[-1] == "code 0 matplotlib True left []", one.stdout
    assert table_of(two.stdout) == table_of(one.stdout) and len(table_of(two.stdout)) == 4, two.stdout
    rows = {
        name: json.loads((project / name / "sweep.json").read_text(encoding="utf-8"))["rows"] for name in ("one", "two")
    }
    ranked = {
        name: [(r["evaluation.max_depth"], r["eval_res.map"], r["rank"]) for r in got] for name, got in rows.items()
    }
    assert sorted(ranked["two"], key=str) == sorted(ranked["one"], key=str)
    plots = ["plot_evaluation.max_depth.png"]
    for name in ("one", "two"):
        assert sorted(p.name for p in (project / name).glob("*.png")) == plots
        assert (project / name / plots[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert two.stdout.count("wrote ") == 3 and two.stdout.count("sweep.json") == 1, two.stdout


def test_a_report_that_fails_in_the_report_process_is_the_commands_error(project: Path) -> None:
    """The report process cannot write a plot: the command exits with that error, once, and no traceback."""
    patch = """
        from ultra_client.errors import UltraError
        from ultra_client.sweep import report
        command = os.getpid()
        def unwritable(figure, path):
            where = "another" if os.getpid() != command else "this"
            raise UltraError(f"{path}: cannot write the plot: drawn in {where} process")
        report._save_atomic = unwritable
    """
    done = sweep_in_script(project, 2, "failing", patch)
    assert done.stdout.splitlines()[-1] == "code 1 matplotlib False left []", done.stdout + done.stderr
    assert done.stderr.count("cannot write the plot: drawn in another process") == 1, done.stderr
    assert "Traceback" not in done.stderr


ENDINGS = {
    "no answer": "reporter.Reporter._serve = lambda self: 3",
    # half an answer: the pickled reply cut short, as a process killed while writing it would leave
    "a cut answer": """
        import pickle
        def cut(self):
            os.close(self._request[1])
            os.write(self._answer[1], pickle.dumps(("ok", ("table", []), []))[:9])
            return 3
        reporter.Reporter._serve = cut
    """,
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_report_process_that_ends_without_an_answer_leaves_the_report_here(project: Path, ending: str) -> None:
    """The report process ends before it answers in full: the command makes the report itself, as one worker
    does."""
    patch = "from ultra_client.sweep.processes import reporter\n" + textwrap.dedent(ENDINGS[ending])
    done = sweep_in_script(project, 2, "fallback", patch)
    assert done.stdout.splitlines()[-1] == "code 0 matplotlib True left []", done.stdout + done.stderr
    assert table_of(done.stdout)[0].startswith("rank trial evaluation.max_depth eval_res.map"), done.stdout
    assert len(table_of(done.stdout)) == 4, done.stdout
    assert sorted(p.name for p in (project / "fallback").glob("*.png")) == ["plot_evaluation.max_depth.png"]


REFUSED = {
    # a swept setting the parameter file lacks: refused by the worker's own checks, after the fork
    "setting": (
        ["--grid", "evaluation.nope=[1, 2]", "--metric", "eval_res.map"],
        "unknown setting 'nope' of evaluation",
    ),
    # no metric: refused as the sweep is read, before any worker starts
    "metric": (["--grid", "evaluation.max_depth=[5, 50]"], "a shared study optimises a metric"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_sweep_refused_before_its_trials_stops_the_report_process(project: Path, case: str) -> None:
    """The command's error, once, and the report process (forked before the sweep is read) reaped without a
    word."""
    code = """
        import os, sys
        from ultra_client import cli
        code = cli.main(sys.argv[1:])
        try:
            print("left", os.waitpid(-1, os.WNOHANG))
        except ChildProcessError:
            print("none left")
        print("code", code)
    """
    given, message = REFUSED[case]
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), "sweep", "pipes/trec.yaml", *given,
         "--workers", "2", "--output-dir", "refused"],
        cwd=project, env=environment(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.stdout.splitlines() == ["none left", "code 1"], done.stdout + done.stderr
    assert done.stderr.count(message) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert not list((project / "refused").glob("*.png")) and not (project / "refused" / "sweep.json").exists()
