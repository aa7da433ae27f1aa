"""``ultra sweep`` bounded, through the real CLI: a huge grid is refused at once with its count, a big allowed
grid starts at once and stops on SIGTERM within seconds, and a NaN metric is reported as NaN without
restarting the servers.

The sweeps run a small server written into tmp_path (``sweepy``): its ``score`` tool sleeps ``seconds``
and returns ``float(value)``, so a setting spells NaN or infinity; ``a``, ``b``, ``c`` only widen the grid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.hostile.conftest import clear_error
from tests.support.background import Command, Finished, in_background
from tests.support.slow_server import wait_for

SERVER = '''"""A server for sweep tests: score = float(value), after sleeping ``seconds``."""
from __future__ import annotations

import time
from pathlib import Path

from typing_extensions import TypedDict

from ultra_kit.factory import ServerSpec


class Scores(TypedDict):
    scores: dict[str, float]


def score(value: str, a: int, b: int, c: int, seconds: float) -> Scores:
    """The score float(value), after sleeping ``seconds``."""
    time.sleep(seconds)
    return {"scores": {"main": float(value), "sum": float(a + b + c)}}


SPEC = ServerSpec("sweepy", Path(__file__).parent, lambda: [score])

if __name__ == "__main__":
    SPEC.main()
'''
SETTINGS = 'value: "0.5"\na: 0\nb: 0\nc: 0\nseconds: 0\n'
SIXTY_MILLION = ["sweepy.a=" + str(list(range(400))), "sweepy.b=" + str(list(range(400)))]
SIXTY_MILLION += ["sweepy.c=" + str(list(range(375)))]  # 400 x 400 x 375 = 60,000,000 trials


def project(tmp_path: Path, *, stdio: bool = False, seconds: float = 0) -> Path:
    """``sweepservers/sweepy`` (the server above) and ``pipes/score.yaml`` with its parameter file."""
    package = tmp_path / "sweepservers" / "sweepy"
    package.mkdir(parents=True)
    (tmp_path / "sweepservers" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "server.py").write_text(SERVER)
    (package / "__main__.py").write_text("from sweepservers.sweepy.server import SPEC\n\nSPEC.main()\n")
    (package / "parameter.yaml").write_text(SETTINGS)
    (tmp_path / "pipes" / "parameters").mkdir(parents=True)
    server = "{path: sweepservers/sweepy, transport: stdio}" if stdio else "sweepservers/sweepy"
    (tmp_path / "pipes" / "score.yaml").write_text(f"servers:\n  sweepy: {server}\npipeline:\n  - sweepy.score\n")
    params = SETTINGS.replace("seconds: 0", f"seconds: {seconds}")
    (tmp_path / "pipes" / "parameters" / "score_parameter.yaml").write_text(
        "sweepy:\n" + "".join(f"  {line}\n" for line in params.splitlines())
    )
    return tmp_path


def command(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "ultra.py"), "sweep", "pipes/score.yaml", "--output-dir", "sw", *args]


def grid(*assignments: str) -> list[str]:
    return [word for text in assignments for word in ("--grid", text)]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_a_sixty_million_trial_grid_is_refused_at_once(tmp_path: Path) -> None:
    """The count is computed, not enumerated: refused in about the start-up time, in little memory, no files."""
    root = project(tmp_path)
    measure = (  # the peak memory of the ultra process, from its parent
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
        "print('maxrss_kb', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
        "sys.exit(r.returncode)"
    )
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", measure, *command(*grid(*SIXTY_MILLION), "--metric", "scores.main")],
        cwd=root,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    print(f"refused in {elapsed:.2f} s")
    peak = int(result.stderr.rsplit("maxrss_kb", 1)[1].split()[0])
    result.stderr = result.stderr.rsplit("maxrss_kb", 1)[0]
    clear_error(result, "60,000,000 trials", "max_trials (10,000)", "--max-trials")
    assert elapsed < 10, elapsed
    assert peak < 400_000, f"peak memory {peak} KB"  # building the grid took 11.8 GB
    assert not (root / "sw").exists() and not (root / "output").exists()


def spare_sweep(*args: str, stdio: bool = False, timeout: float = 120) -> pytest.MarkDecorator:
    """``command(*ARGS)`` in ``project(folder, stdio=STDIO)``: a spare background run (tests/support/background.py)."""

    def prepare(folder: Path) -> Command:
        root = project(folder, stdio=stdio)
        return Command(tuple(command(*args)[2:]), timeout=timeout, cwd=root)  # command() less python and ultra.py

    return in_background(prepare, spare=True)


TOO_MANY = [
    (["--random", "20000"], ["--random: 20,000 trials is more than max_trials (10,000)"]),
    (["--max-trials", "5"], ["the grid holds 6 trials", "more than max_trials (5)"]),
    (["--max-trials", "0"], ["--max-trials: max_trials must be a positive whole number"]),
]


@pytest.mark.parametrize(("args", "fragments"), [
    pytest.param(args, fragments, marks=spare_sweep(*grid("sweepy.a=[1, 2, 3]", "sweepy.b=[1, 2]"), *args))
    for args, fragments in TOO_MANY])  # fmt: skip
def test_more_trials_than_max_trials_are_refused(background_run: Finished, args: list[str], fragments: list[str]):
    root, result = background_run.folder, background_run.done
    clear_error(result, *fragments)
    assert not (root / "sw").exists()


def test_max_trials_in_a_sweep_file(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "pipes" / "big.yaml").write_text(
        "sweep:\n  pipeline: score.yaml\n  grid:\n    sweepy.a: [1, 2, 3]\n    sweepy.b: [1, 2]\n  max_trials: 4\n"
    )
    base = [sys.executable, str(ROOT / "ultra.py"), "sweep", "pipes/big.yaml", "--output-dir", "sw"]
    refused = subprocess.run(base, cwd=root, env=env(), capture_output=True, text=True, timeout=120)
    clear_error(refused, "the grid holds 6 trials", "more than max_trials (4)")
    assert not (root / "sw").exists()
    allowed = subprocess.run(  # the option overrides the file
        [*base, "--max-trials", "6"], cwd=root, env=env(), capture_output=True, text=True, timeout=120
    )
    assert allowed.returncode == 0, allowed.stderr
    assert len(json.loads((root / "sw" / "sweep.json").read_text())["rows"]) == 6


@pytest.mark.parametrize("stdio", [False, True], ids=["in-process", "stdio"])
@pytest.mark.parametrize("seconds", [0.0, 30.0], ids=["between-short-trials", "during-a-long-trial"])
def test_a_big_allowed_grid_starts_at_once_and_stops_on_sigterm(tmp_path: Path, seconds: float, stdio: bool) -> None:
    """60 million trials allowed: the first trial starts within seconds (nothing enumerated first), and SIGTERM
    stops the sweep within 2 s (asserted with a margin for a loaded machine) whether a trial is running or not."""
    root = project(tmp_path, seconds=seconds, stdio=stdio)
    started = time.monotonic()
    process = subprocess.Popen(
        command(*grid(*SIXTY_MILLION), "--max-trials", "100000000"),
        cwd=root,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        trials = root / "sw" / "trials"
        wanted = 1 if seconds else 3  # a long trial running; or a few short ones finished
        pattern = "*" if seconds else "*/trial.json"
        assert wait_for(lambda: len(list(trials.glob(pattern))) >= wanted, 60), "no trial started"
        first = time.monotonic() - started
        if seconds:
            time.sleep(0.5)  # inside the trial's 30 s sleep
        process.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        _, stderr = process.communicate(timeout=30)
        stopped = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    print(f"first trial after {first:.2f} s; stopped {stopped:.2f} s after SIGTERM")
    assert first < 30, first
    assert stopped < 2, stopped  # the target (measured: 0.00-0.12 s; a stdio server stops when its stdin closes)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "stopped by SIGTERM" in stderr and "Traceback" not in stderr, stderr
    if not seconds:
        assert "trial 1/60000000: sweepy.a=0, sweepy.b=0, sweepy.c=0" in stderr, stderr
    assert not (root / "sw" / "sweep.json").exists()


@pytest.mark.parametrize("stdio", [
    pytest.param(stdio, id=name, marks=spare_sweep(*grid('sweepy.value=["0.5", "nan", "inf", "0.7"]'), "--metric",
                                                   "scores.main", stdio=stdio, timeout=300))
    for stdio, name in ((False, "in-process"), (True, "stdio"))])  # fmt: skip
def test_a_nan_metric_is_reported_as_nan_and_the_servers_are_not_restarted(background_run: Finished, stdio: bool):
    root, result = background_run.folder, background_run.done
    assert result.returncode == 0, result.stderr
    assert "stopped answering" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert "restarting the servers" not in result.stderr, result.stderr
    assert not list((root / "sw" / "logs").glob("restart_*"))
    rows = {row["trial"]: row for row in json.loads((root / "sw" / "sweep.json").read_text())["rows"]}
    assert [rows[n]["status"] for n in (1, 2, 3, 4)] == ["ok", "failed", "failed", "ok"]
    assert rows[4]["rank"] == 1 and rows[1]["rank"] == 2 and rows[2]["rank"] is None
    if stdio:  # JSON carries NaN and infinity as null: the key is known, the value is "NaN or infinite"
        for trial in (2, 3):
            assert f"trial {trial}/4: sweepy.value=" in result.stderr
            assert "output scores.main is NaN or infinite" in rows[trial]["error"]
    else:
        assert "trial 2/4: sweepy.value=nan: FAILED (trial 2: scores.main = nan, not a finite number)" in result.stderr
        assert rows[3]["error"] == "trial 3: scores.main = inf, not a finite number"


def nan_call(stdio: bool) -> pytest.MarkDecorator:
    """``ultra call sweepy.score value=nan`` in the project's ``sweepservers``: a spare background run."""

    def prepare(folder: Path) -> Command:
        root = project(folder)
        return Command(("call", "sweepy.score", "value=nan", *(["--stdio"] if stdio else [])), timeout=120,
                       cwd=root / "sweepservers")  # fmt: skip

    return in_background(prepare, spare=True)


@pytest.mark.parametrize("stdio", [pytest.param(stdio, id=name, marks=nan_call(stdio))
                                   for stdio, name in ((False, "in-process"), (True, "stdio"))])  # fmt: skip
def test_ultra_call_reports_a_nan_output_as_nan_not_as_a_crash(background_run: Finished, stdio: bool) -> None:
    result = background_run.done
    assert "stopped answering" not in result.stderr and "crashed" not in result.stderr, result.stderr
    if stdio:  # JSON carries NaN as null, which the output schema refuses: a clear error naming the key
        clear_error(result, "sweepy.score failed: output scores.main is NaN or infinite, not a finite number")
    else:
        assert result.returncode == 0, result.stderr
        assert '"main": NaN' in result.stdout
