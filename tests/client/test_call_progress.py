"""``ultra call`` shows a tool's progress bar on a terminal as ``ultra run`` does, in-process and over
stdio; stdout holds the JSON result alone, and a stderr that is not a terminal (a script, an agent)
gets no progress lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.support.terminal import on_a_terminal

SERVER = '''
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from ultra_kit.factory import ServerSpec
from ultra_kit.progress import progress_from_context

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


class Count(TypedDict):
    count: int


def slow_count(n: int, pause: float, ctx: Context | None = None) -> Count:
    """Report progress n times, pause seconds apart."""
    report = progress_from_context(ctx)
    for i in range(1, n + 1):
        time.sleep(pause)
        report(i, n, f"item {i}")
    return {"count": n}


SPEC = ServerSpec("slow", Path(__file__).parent, lambda: [slow_count])

if __name__ == "__main__":
    SPEC.create_app().run()
'''


def slow_project(tmp_path: Path) -> Path:
    package = tmp_path / "slow"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "server.py").write_text(SERVER)
    (package / "parameter.yaml").write_text("n: 3\npause: 0.05\n")
    return tmp_path


@pytest.mark.parametrize("mode", [[], ["--stdio"]], ids=["in-process", "stdio"])
def test_ultra_call_shows_the_progress_bar_on_a_terminal(tmp_path: Path, mode: list[str]) -> None:
    status, stdout, screen = on_a_terminal(["call", "slow.slow_count", *mode], slow_project(tmp_path))
    assert status == 0, screen
    assert json.loads(stdout) == {"count": 3}  # the bar never reaches stdout
    redraws = [part.partition("\r")[0] for part in screen.split("\r  slow.slow_count [")[1:]]
    assert len(redraws) == 3, screen  # one redraw per report, each clearing the rest of the line
    assert all(text.rstrip("\n").endswith("\x1b[K") for text in redraws), redraws
    assert re.fullmatch(r"#{30}\] 100% \(3/3\) \d+:\d\d elapsed item 3\x1b\[K", redraws[-1]), redraws[-1]
    assert screen.endswith("item 3\x1b[K\r\n")  # the bar's line is ended when the call returns


def test_ultra_call_prints_no_progress_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    done = run_ultra("call", "slow.slow_count", cwd=slow_project(tmp_path))
    assert done.returncode == 0 and json.loads(done.stdout) == {"count": 3}
    assert done.stderr == ""
