"""SIGTERM ends an in-process ``ultra run`` at once, even while a tool's thread is busy writing its result.

A custom server in a temporary folder reserves its result file, starts writing it and sleeps 30 s in
the middle (a sync tool: a worker thread Python cannot stop). ``ultra run`` must exit within a few
seconds with status 143 and a clear message, leaving neither memory.json nor the empty reserved name
nor the half-written temporary file. The same holds when SIGINT is ignored (a run started in the
background by a script), where SIGTERM used to be ignored too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

SERVER = '''
"""A server whose tool reserves its result, writes half of it and sleeps."""

import time
from pathlib import Path

from typing_extensions import TypedDict

from servers.core.factory import ServerSpec
from servers.core.files import atomic_write, result_path


class Written(TypedDict):
    result_path: str


def slow_write(*, seconds: float, directory: str) -> Written:
    """Reserve output/slow/slow_write_<time>.json, write "{", sleep, then finish it."""
    path = result_path("output/slow", "slow_write")

    def write(handle) -> None:
        handle.write("{")
        handle.flush()
        (Path(directory) / "writing").write_text(str(path))
        time.sleep(seconds)
        handle.write("}")

    atomic_write(path, write)
    return {"result_path": str(path)}


SPEC = ServerSpec("slow", Path(__file__).parent, lambda: [slow_write])
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    package = tmp_path / "slowsrv"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "server.py").write_text(textwrap.dedent(SERVER))
    (package / "parameter.yaml").write_text("seconds: 30\ndirectory: .\n")
    (tmp_path / "p.yaml").write_text("servers:\n  slow: slowsrv\npipeline:\n  - slow.slow_write\n")
    (tmp_path / "params.yaml").write_text(f"slow:\n  seconds: 30\n  directory: {tmp_path}\n")
    return tmp_path


def wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_sigterm_ends_a_busy_in_process_run_at_once(project: Path, sigint: str) -> None:
    client = subprocess.Popen(
        [sys.executable, str(ROOT / "ultra.py"), "run", "p.yaml", "--param", "params.yaml"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT), "ULTRA_ALLOW_OUTSIDE_OUTPUT": "0"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore_sigint if sigint == "ignored" else None,
    )
    try:
        assert wait_for(lambda: (project / "writing").is_file(), 60), "the tool never started writing"
        slow = project / "output" / "slow"
        reserved = Path((project / "writing").read_text())
        assert reserved.parent == slow.resolve() and reserved.stat().st_size == 0
        assert len(list(slow.iterdir())) == 2  # the reserved name and the temporary file being written
        sent = time.monotonic()
        client.send_signal(signal.SIGTERM)
        _, stderr = client.communicate(timeout=15)
        took = time.monotonic() - sent
    finally:
        if client.poll() is None:
            client.kill()
            client.communicate()
    assert took < 5, f"ultra run took {took:.1f} s to stop"
    assert client.returncode == 143, stderr[-2000:]
    assert "stopped by SIGTERM: the servers were stopped and the run did not finish" in stderr
    assert "Traceback" not in stderr
    assert list(slow.iterdir()) == []  # neither the empty reserved name nor the half-written file
    (run_folder,) = [p for p in (project / "output").iterdir() if p.name.startswith("p_")]
    assert not (run_folder / "memory.json").exists()
