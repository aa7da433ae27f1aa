"""A server package with a ``SPEC`` but no ``__main__.py`` cannot run over stdio: one clear error says why.

``python -m slowsrv.server`` imports the module and exits at once, so the MCP handshake finds the
connection closed. ``ultra call --stdio`` and ``ultra run`` (``transport: stdio``) must name the server,
the command they started, that it exited without a word on stderr, and what to do; no traceback and
no "unhandled errors in a TaskGroup". Adding the ``__main__.py`` the message suggests makes it work.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.support.slow_server import write_slow_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_slow_server(tmp_path)  # slowsrv/: __init__.py, server.py (SPEC), parameter.yaml; no __main__.py
    pipeline = "servers:\n  slow: {path: slowsrv, transport: stdio}\npipeline:\n  - slow.slow_write\n"
    (tmp_path / "p.yaml").write_text(pipeline)
    (tmp_path / "params.yaml").write_text(f"slow:\n  seconds: 0\n  directory: {tmp_path}\n")
    return tmp_path


def assert_no_entry_point_error(stderr: str, alias: str, project: Path) -> None:
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("[ultra]")]
    assert len(lines) == 2, stderr
    assert lines[0] == (
        f"error: server '{alias}' (slowsrv.server) failed to start: `python -m slowsrv.server` (in {project}) "
        "exited or closed its output before answering and wrote nothing to its stderr"
    )
    assert lines[1] == (
        "  slowsrv has no __main__.py, so nothing in it runs an MCP server: run it in-process (without --stdio, "
        f"--timeout or 'transport: stdio'), or add {project / 'slowsrv'}/__main__.py with "
        "`from slowsrv.server import SPEC` and `SPEC.create_app().run()`"
    )
    assert "Traceback" not in stderr and "TaskGroup" not in stderr


def test_call_stdio_on_a_spec_without_main_says_what_to_do(project: Path) -> None:
    result = run_ultra("call", "--stdio", "slowsrv.slow_write", f"directory={project}", "seconds=0", cwd=project)
    assert result.returncode == 1
    assert result.stdout == ""
    assert_no_entry_point_error(result.stderr, "slowsrv", project)
    assert not (project / "output" / "slow").exists()


def test_run_with_a_stdio_spec_without_main_says_what_to_do(project: Path) -> None:
    result = run_ultra("run", "p.yaml", "--param", "params.yaml", cwd=project)
    assert result.returncode == 1
    assert_no_entry_point_error(result.stderr, "slow", project)
    assert not (project / "output" / "slow").exists()


def test_the_suggested_main_makes_the_stdio_call_work(project: Path) -> None:
    (project / "slowsrv" / "__main__.py").write_text("from slowsrv.server import SPEC\n\nSPEC.create_app().run()\n")
    result = run_ultra("call", "--stdio", "slowsrv.slow_write", f"directory={project}", "seconds=0", cwd=project)
    assert result.returncode == 0, result.stderr
    written = Path(json.loads(result.stdout)["result_path"])
    assert written.parent == (project / "output" / "slow").resolve()
    assert written.read_text() == "{}"
