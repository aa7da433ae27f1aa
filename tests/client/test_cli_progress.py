"""The progress bar of ``ultra run``: elapsed time and ETA, and a line cleared on every redraw (issue 15, item 5)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.support.terminal import on_a_terminal
from tests.support.together import at_once

SERVER = '''
import time
from pathlib import Path

from mcp.server.mcpserver import Context
from typing_extensions import TypedDict

from ultra_kit.factory import build_server
from ultra_kit.progress import progress_from_context


class Count(TypedDict):
    count: int


def slow_count(n: int, pause: float, ctx: Context) -> Count:
    """Report progress n times, pause seconds apart; the messages get shorter."""
    report = progress_from_context(ctx)
    for i in range(1, n + 1):
        time.sleep(pause)
        report(i, n, "x" * (4 * (n - i)))
    return {"count": n}


def batch_count(n: int, pause: float, batch: int, ctx: Context) -> Count:
    """Report n counts in batches of ``batch`` at one moment each, pause seconds apart (a local model's batches)."""
    report = progress_from_context(ctx)
    for first in range(1, n + 1, batch):
        time.sleep(pause)
        for i in range(first, min(first + batch, n + 1)):
            report(i, n, f"answered {i}/{n}")
    return {"count": n}


app = build_server("slow", [slow_count, batch_count], package_dir=Path(__file__).parent)

if __name__ == "__main__":
    app.run()
'''


def slow_project(tmp_path: Path, n: int, pause: float, tool: str = "slow_count") -> Path:
    package = tmp_path / "srv" / "slow"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "server.py").write_text(SERVER)
    (package / "parameter.yaml").write_text(f"n: {n}\npause: {pause}\nbatch: 8\n")
    pipeline = tmp_path / "slow.yaml"
    pipeline.write_text(f"servers:\n  slow: srv/slow\npipeline:\n  - slow.{tool}\n")
    return pipeline


def eta_run(folder: Path, env: dict[str, str]) -> tuple[int, str]:
    """``ultra run`` of four counts 0.8 s apart, its stderr captured: the exit code and the stderr."""
    pipeline = slow_project(folder, n=4, pause=0.8)
    result = run_ultra("run", str(pipeline), cwd=folder, env=env)
    return result.returncode, result.stderr


def batch_run(folder: Path, env: dict[str, str]) -> tuple[int, str]:
    """``ultra run`` of two batches of 8 counts 2.5 s apart, its stderr a log file: the exit code and the log."""
    pipeline = slow_project(folder, n=16, pause=2.5, tool="batch_count")
    log = folder / "stderr.log"
    with log.open("w") as stderr:
        done = subprocess.run(
            [sys.executable, str(ROOT / "ultra.py"), "run", str(pipeline)],
            cwd=folder,
            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            timeout=120,
        )
    return done.returncode, log.read_text()


@pytest.fixture(scope="module")
def paused_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str]]:
    """The two runs whose steps mostly sleep (3.2 s and 5 s), at once, each in a folder of its own (what the
    autouse fixtures of tests/conftest.py give a test, with that folder as its temporary root)."""
    runs = {"eta": eta_run, "batch": batch_run}
    folders = {name: tmp_path_factory.mktemp(name) for name in runs}
    envs = {name: {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1", "ULTRA_READ_ROOTS": os.pathsep.join([str(folder), str(ROOT)])}
            for name, folder in folders.items()}  # fmt: skip
    return at_once({name: lambda name=name, run=run: run(folders[name], envs[name]) for name, run in runs.items()})


def test_progress_lines_show_elapsed_time_and_eta(paused_runs: dict[str, tuple[int, str]]) -> None:
    returncode, stderr = paused_runs["eta"]
    assert returncode == 0, stderr
    bars = [line for line in stderr.splitlines() if line.startswith("  slow.slow_count [")]
    first, last = bars[0], bars[-1]
    # 1 of 4 done: one completion, no rate yet, so no ETA (the time before it may be a model loading). The lines
    # of 2 or 3 of 4 (a log gets a line a second at most: 3 of 4 comes 1.6 s after 1 of 4) have an ETA at the
    # rate between completions (tests/client/test_progress_eta.py checks the numbers on a fake clock).
    assert re.search(r"\(1/4\) \d+:\d\d elapsed x+$", first), first
    middle = bars[1:-1]
    assert middle and all(re.search(r"\([23]/4\) \d+:\d\d elapsed, ETA \d+:\d\d x+$", m) for m in middle), bars
    done = re.search(r"100% \(4/4\) 0:(\d\d) elapsed$", last)
    assert done and int(done.group(1)) >= 3, last  # four pauses of 0.8 s; no ETA once finished


def test_a_log_shows_a_batchs_current_count_not_its_first(paused_runs: dict[str, tuple[int, str]]) -> None:
    """A local model answers 8 prompts at once: 8 counts at one moment, then none for a while. In a log (stderr a
    file) the line of the first count was written and the other 7 were dropped by the throttle (a line a second), so
    the log said 1 of 16 done while 8 were, until the next batch. The line of a batch now shows its last count."""
    returncode, text = paused_runs["batch"]
    assert returncode == 0, text
    counts = [int(m.group(1)) for m in re.finditer(r"^  slow\.batch_count \[.*\((\d+)/16\)", text, re.M)]
    first_batch = [c for c in counts if 0 < c <= 8]
    assert first_batch and first_batch[-1] == 8, text  # what the log says while the second batch is awaited
    assert counts[-1] == 16 and "answered 8/16" in text, text


def test_on_a_terminal_each_redraw_clears_the_rest_of_the_line(tmp_path: Path) -> None:
    pipeline = slow_project(tmp_path, n=5, pause=0.2)
    status, _, screen = on_a_terminal(["run", str(pipeline)], tmp_path)
    assert status == 0
    redraws = screen.split("\r  slow.slow_count [")[1:]
    assert len(redraws) == 5, screen
    for redraw in redraws:
        text, _, _ = redraw.partition("\r")
        assert text.endswith("\x1b[K") or text.endswith("\x1b[K\n"), repr(text)


def test_a_silent_step_shows_it_is_working_and_then_its_last_count_with_the_time_so_far() -> None:
    """#41: a SmolLM2 step showed nothing for minutes (the model loading, then its first batch of 8). After
    ``heartbeat`` seconds without news the step's line says it is working; after a report, its last count again."""
    import asyncio
    import io

    from ultra_client.progress import ProgressBar

    async def scenario() -> list[str]:
        stream = io.StringIO()
        bar = ProgressBar("judge.umbrela_judge", stream=stream, heartbeat=0.05, quiet_lines=0.05)
        alive = asyncio.get_running_loop().create_task(bar.keep_alive())
        for _ in range(3000):  # poll for the state, however loaded the machine (at most 30 s)
            if "working" in stream.getvalue():
                break
            await asyncio.sleep(0.01)
        await bar(1, 180, "judged 1/180 passages")
        for _ in range(3000):
            if stream.getvalue().count("(1/180)") >= 2:
                break
            await asyncio.sleep(0.01)
        alive.cancel()
        return stream.getvalue().splitlines()

    lines = asyncio.run(scenario())
    assert re.fullmatch(r"  judge\.umbrela_judge: working, 0:\d\d elapsed", lines[0]), lines
    counted = [line for line in lines[1:] if "(1/180)" in line and line.endswith("judged 1/180 passages")]
    assert len(counted) >= 2, lines  # the report, then the same count redrawn with the time so far
