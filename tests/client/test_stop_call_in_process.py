"""SIGTERM, SIGHUP (and Ctrl-C) end an in-process ``ultra call`` at once, even while its tool's thread is busy
writing; SIGTERM ends ``ultra call --stdio`` at once too, and its server process with it (which removes
its unfinished files as it goes: ``ultra_kit.lifeline``).

The tool (``tests/support/slow_server.py``) reserves its result name, writes half the file and sleeps
30 s. ``ultra call`` must exit before that sleep ends (checked as a state, the tool's ``finished`` note
never written, not as a time bound that a loaded machine breaks) with 143 (129 for SIGHUP, 130 for
SIGINT) and one line saying so, print no result, and leave neither the empty reserved name nor the
half-written temporary file. SIGTERM works so when SIGINT is ignored too (a call started in the
background by a script). The tool's notes appear whole (renamed into place), so the test never reads
a half-written one.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.support.slow_server import (
    alive,
    start_ultra,
    stop_when_writing,
    tool_finished,
    wait_for,
    write_slow_server,
)


@pytest.mark.parametrize(
    ("signum", "sigint_ignored", "status", "message"),
    [
        (signal.SIGTERM, False, 143, "stopped by SIGTERM: the call did not finish and wrote no result"),
        (signal.SIGTERM, True, 143, "stopped by SIGTERM: the call did not finish and wrote no result"),
        (signal.SIGHUP, False, 129, "stopped by SIGHUP: the call did not finish and wrote no result"),
        (signal.SIGINT, False, 130, "interrupted"),
    ],
    ids=["sigterm", "sigterm-sigint-ignored", "sighup", "sigint"],
)
def test_a_signal_ends_a_busy_in_process_call_at_once(
    tmp_path: Path, signum: int, sigint_ignored: bool, status: int, message: str
) -> None:
    write_slow_server(tmp_path)
    client = start_ultra(
        "call", "slowsrv.slow_write", f"directory={tmp_path}", cwd=tmp_path, sigint_ignored=sigint_ignored
    )
    stdout, stderr, took = stop_when_writing(client, tmp_path, signum)
    assert not tool_finished(tmp_path), f"ultra call ran until its tool finished ({took:.1f} s after the signal)"
    assert client.returncode == status, stderr[-2000:]
    assert [line for line in stderr.splitlines() if line.strip()] == [message]
    assert stdout == ""
    assert list((tmp_path / "output" / "slow").iterdir()) == []  # neither the reserved name nor the half-written file


def test_sigterm_ends_a_busy_stdio_call_and_its_server(tmp_path: Path) -> None:
    write_slow_server(tmp_path, runnable=True)
    client = start_ultra("call", "--stdio", "slowsrv.slow_write", f"directory={tmp_path}", cwd=tmp_path)
    stdout, stderr, took = stop_when_writing(client, tmp_path, signal.SIGTERM)
    server_pid = int((tmp_path / "pid").read_text())
    assert server_pid != client.pid  # the tool ran in the server subprocess
    assert not tool_finished(tmp_path), f"ultra call --stdio waited for its tool ({took:.1f} s after the signal)"
    assert client.returncode == 143, stderr[-2000:]
    assert [line for line in stderr.splitlines() if line.strip()] == [
        "stopped by SIGTERM: the call did not finish and wrote no result"
    ]
    assert stdout == ""
    assert wait_for(lambda: not alive(server_pid), 3), f"the server (pid {server_pid}) outlived ultra call"
    assert list((tmp_path / "output" / "slow").iterdir()) == []  # the stopped server removed both files
