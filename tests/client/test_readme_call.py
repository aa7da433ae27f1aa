"""The README's ``ultra call`` example prints what the README shows: the shown lines, in order, with
``...`` standing for lines left out (and any run folder path and time stamp for the one printed)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.conftest import ROOT, run_ultra


def readme_call() -> tuple[list[str], list[str]]:
    """(the command's arguments, the lines of the output block after it)."""
    text = (ROOT / "README.md").read_text("utf-8")
    command = re.search(r"^ultra call (evaluation\.evaluate .*)$", text, re.MULTILINE)
    shown = re.search(r"The first prints[^\n]*\n\n```text\n(.*?)```", text, re.DOTALL)
    assert command and shown
    return shlex.split(command.group(1)), shown.group(1).splitlines()


def test_the_readme_shows_ultra_calls_output_as_printed(tmp_path: Path) -> None:
    args, shown = readme_call()
    result = run_ultra("call", *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    printed = iter(result.stdout.splitlines())
    for line in shown:
        if line.strip() == "...":
            continue
        pattern = (
            re.escape(line).replace(re.escape("/path/to/ultra-eval"), ".+").replace(r"20261126_020243", r"\d{8}_\d{6}")
        )
        assert any(re.fullmatch(pattern, out) for out in printed), f"README line not printed (in order): {line!r}"
