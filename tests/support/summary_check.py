"""Check the table ``ultra run`` prints at its end against the run's own ``memory.json``.

Used by the end-to-end tests of every example pipeline: each variable that holds a number, or a mapping
with numbers in it, must have a row, numbers printed with 4 decimals, and no line may be wider than 100
characters (``ultra run --full`` prints wider).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from ultra_client.summary.tables import WIDTH


def run_folder(done: subprocess.CompletedProcess, cwd: Path) -> Path:
    """The run folder named on the ``done:`` line."""
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("done: ")]
    return (cwd / line.removeprefix("done: ").strip()).resolve()


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _cell(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def assert_fits(stdout: str, width: int = WIDTH) -> None:
    """Assert no line of the end of a run (the summary before its ``done:`` line) is wider than ``width``."""
    wide = [line for line in stdout.split("done: ")[0].splitlines() if len(line) > width]
    assert not wide, f"{len(wide)} summary lines wider than {width} characters, e.g.\n{wide[0]}"


def check_summary(done: subprocess.CompletedProcess, cwd: Path) -> dict[str, Any]:
    """Assert the table covers the run's results and fits 100 columns; return the run's memory."""
    table = done.stdout.split("done: ")[0]
    assert_fits(done.stdout)
    memory = json.loads((run_folder(done, cwd) / "memory.json").read_text(encoding="utf-8"))
    shown = 0
    for variable, value in memory.items():
        if _number(value):
            assert re.search(rf"^{re.escape(variable)}\s+{re.escape(_cell(value))}\s*$", table, re.M), (
                f"no row for {variable} = {value} in\n{table}"
            )
            shown += 1
        elif isinstance(value, dict):
            numbers = [(k, v) for k, v in value.items() if _number(v)]
            if not numbers:
                continue
            assert re.search(rf"^{re.escape(variable)}\s", table, re.M), f"no rows for {variable} in\n{table}"
            key, first = numbers[0]
            assert re.search(rf"\b{re.escape(str(key))}\s+{re.escape(_cell(first))}\s*$", table, re.M), (
                f"no row {variable}.{key} = {first} in\n{table}"
            )
            shown += 1
    assert shown, f"the run produced no number to show: {sorted(memory)}"
    assert "Traceback" not in done.stdout + done.stderr
    return memory
