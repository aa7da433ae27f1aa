"""A killed or stopped ``ultra run`` leaves no server running and no result behind.

Each test starts ``ultra run`` (a real subprocess) on the toy server's ``busy`` tool, which writes
its pid to a file and sleeps 30 s in a sync function; then signals the client and checks that the
server process is gone within a few seconds and never finished the tool.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.slow_server import alive, wait_for

TOY_SOURCE = ROOT / "tests" / "client" / "toy_server"
GONE_WITHIN = 6.0


@pytest.fixture
def busy_run(tmp_path: Path):
    """Start ``ultra run`` on a pipeline whose one step is busy for 30 s; yield (client, server pid, folders)."""
    shutil.copytree(TOY_SOURCE, tmp_path / "toyservers" / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "pipes").mkdir()
    (tmp_path / "pipes" / "busy.yaml").write_text("servers:\n  toy: toyservers/toy\npipeline:\n  - toy.busy\n")
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "busy_parameter.yaml").write_text(f"toy:\n  seconds: 30\n  directory: {marks}\n")
    client = subprocess.Popen(
        [sys.executable, str(ROOT / "ultra.py"), "run", "pipes/busy.yaml", "--param", "busy_parameter.yaml"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server_pid: list[int] = []
    try:
        assert wait_for(lambda: (marks / "busy.pid").is_file() and (marks / "busy.pid").read_text(), 90), (
            "the busy step never started"
        )
        server_pid.append(int((marks / "busy.pid").read_text()))
        yield client, server_pid[0], marks, tmp_path / "output"
    finally:
        if client.poll() is None:
            client.kill()
        client.communicate(timeout=30)
        for pid in server_pid:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_sigkill_of_the_client_stops_a_busy_server(busy_run) -> None:
    client, server, marks, _ = busy_run
    assert alive(server)
    client.kill()
    client.wait(timeout=10)
    assert wait_for(lambda: not alive(server), GONE_WITHIN), "the server outlived its killed client"
    assert not (marks / "busy.done").exists()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_stop_like_ctrl_c(busy_run, signum: int) -> None:
    client, server, marks, output = busy_run
    client.send_signal(signum)
    _, stderr = client.communicate(timeout=20)
    assert client.returncode == 128 + signum, stderr[-2000:]
    assert f"stopped by {signal.Signals(signum).name}" in stderr
    assert "Traceback" not in stderr
    assert wait_for(lambda: not alive(server), GONE_WITHIN), "the server outlived its stopped client"
    folders = list(output.iterdir())
    assert len(folders) == 1 and (folders[0] / "logs").is_dir()
    assert not (folders[0] / "memory.json").exists()
    assert not (marks / "busy.done").exists()


def test_a_server_started_by_another_host_stops_when_the_host_is_killed(tmp_path: Path) -> None:
    """No ULTRA_PARENT_PID (an agent host, not ultra): the watchdog thread alone stops the busy server."""
    shutil.copytree(TOY_SOURCE, tmp_path / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    host = tmp_path / "host.py"
    host.write_text(
        textwrap.dedent(
            f"""
            import anyio
            from mcp import Client, StdioServerParameters
            from mcp.client.stdio import stdio_client

            async def main():
                params = StdioServerParameters(
                    command={sys.executable!r}, args=["-m", "toy.server"], cwd={str(tmp_path)!r},
                    env={{"PYTHONPATH": {f"{tmp_path}{os.pathsep}{ROOT}"!r}}},
                )
                async with Client(stdio_client(params)) as client:
                    await client.call_tool("busy", {{"seconds": 30, "directory": {str(tmp_path)!r}}})

            anyio.run(main)
            """
        )
    )
    process = subprocess.Popen([sys.executable, str(host)], cwd=tmp_path, stderr=subprocess.PIPE)
    pid_file = tmp_path / "busy.pid"
    server = None
    try:
        assert wait_for(lambda: pid_file.is_file() and pid_file.read_text(), 90), "the busy tool never started"
        server = int(pid_file.read_text())
        process.kill()
        process.wait(timeout=10)
        assert wait_for(lambda: not alive(server), GONE_WITHIN), "the server outlived its killed host"
        assert not (tmp_path / "busy.done").exists()
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)
        if server is not None and alive(server):
            os.kill(server, signal.SIGKILL)
