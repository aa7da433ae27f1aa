"""Run ``ultra`` with its stderr on a pseudo-terminal, to see what a person at a terminal sees."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run ``ultra ARGS`` with stderr on a pseudo-terminal; (exit status, stdout, what the terminal showed)."""
    master, slave = os.openpty()
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "ultra.py"), *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    chunks = []
    while select.select([master], [], [], 120)[0]:
        try:
            data = os.read(master, 4096)
        except OSError:  # the terminal closed: the process has ended
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    stdout = process.stdout.read().decode()
    process.stdout.close()
    return process.wait(timeout=60), stdout, b"".join(chunks).decode()
