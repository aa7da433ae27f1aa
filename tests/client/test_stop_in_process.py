"""SIGTERM ends an in-process ``ultra run`` at once, even while a tool's thread is busy writing its result.

A custom server in a temporary folder (``tests/support/slow_server.py``) reserves its result file,
starts writing it and sleeps 30 s in the middle (a sync tool: a worker thread Python cannot stop).
``ultra run`` must exit within a few seconds with status 143 and a clear message, leaving neither
memory.json nor the empty reserved name nor the half-written temporary file. The same holds when
SIGINT is ignored (a run started in the background by a script), where SIGTERM used to be ignored too.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.support.slow_server import start_ultra, stop_when_writing, tool_finished, write_slow_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_slow_server(tmp_path)
    (tmp_path / "p.yaml").write_text("servers:\n  slow: slowsrv\npipeline:\n  - slow.slow_write\n")
    (tmp_path / "params.yaml").write_text(f"slow:\n  seconds: 30\n  directory: {tmp_path}\n")
    return tmp_path


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_sigterm_ends_a_busy_in_process_run_at_once(project: Path, sigint: str) -> None:
    client = start_ultra("run", "p.yaml", "--param", "params.yaml", cwd=project, sigint_ignored=sigint == "ignored")
    _, stderr, took = stop_when_writing(client, project, signal.SIGTERM)
    assert not tool_finished(project), f"ultra run waited for its tool ({took:.1f} s after the signal)"
    assert client.returncode == 143, stderr[-2000:]
    assert "stopped by SIGTERM: the servers were stopped and the run did not finish" in stderr
    assert "Traceback" not in stderr
    assert list((project / "output" / "slow").iterdir()) == []  # neither the reserved name nor the half-written file
    (run_folder,) = [p for p in (project / "output").iterdir() if p.name.startswith("p_")]
    assert not (run_folder / "memory.json").exists()
