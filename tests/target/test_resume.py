"""A run killed by SIGKILL and run again asks only the items it does not have (real subprocesses)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT

SCRIPT = """
import json, sys, anyio
from servers.target.server import SPEC
from ultra_kit.inprocess import call_local_tool, local_tools
arguments = json.loads(sys.argv[1])
result = anyio.run(call_local_tool, local_tools(SPEC)["ask"], arguments)
print(json.dumps(result))
"""


def start(tmp_path: Path, arguments: dict) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}
    return subprocess.Popen([sys.executable, "-c", SCRIPT, json.dumps(arguments)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def journal_ids(folder: Path) -> list[str]:
    ids = []
    for file in (folder / ".resume").glob("ask_*.jsonl"):
        for line in file.read_text().splitlines():
            with contextlib.suppress(ValueError):  # a line the kill cut
                ids.append(json.loads(line)["id"])
    return ids


def test_a_killed_run_resumes_asking_only_the_missing_items(tmp_path, service):
    service.slow_seconds = 0.3
    ids = [f"i{n}" for n in range(12)]
    target = {"kind": "http", "url": f"{service.url}/slow", "body": {"question": "{{ question }}", "id": "{{ id }}"},
              "max_workers": 2}  # fmt: skip
    arguments = {"q_ls": [f"question {i}" for i in ids], "id_ls": ids, "target": target,
                 "save_path": str(tmp_path / "out")}  # fmt: skip
    first = start(tmp_path, arguments)
    deadline = time.monotonic() + 60
    while len(journal_ids(tmp_path / "out")) < 4 and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait()
    kept = journal_ids(tmp_path / "out")
    assert 4 <= len(kept) < len(ids), "the kill must land mid-run"
    asked_before = len(service.seen)

    second = start(tmp_path, arguments)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    result = json.loads(out)
    asked_again = sorted(s["body"]["id"] for s in service.seen[asked_before:])
    assert asked_again == sorted(set(ids) - set(kept))
    assert result["pred_ls"] == [f"A:question {i}" for i in ids]
    assert result["target_info"]["resumed"] == len(kept)
    assert result["target_info"]["requests"] == len(ids) - len(kept)
    assert not list((tmp_path / "out" / ".resume").glob("*.jsonl"))  # a finished run leaves no journal


def test_the_journal_writes_its_waiting_lines_when_a_run_stops(tmp_path):
    """Lines wait at most FLUSH_SECONDS in memory; a run that stops (an error, a cancel) writes them at close, and
    a finished run removes the file."""
    import asyncio

    from servers.target.records.journal import Journal

    async def run(finished: bool) -> Journal:
        journal = Journal(tmp_path, "k" * 64)
        for n in range(3):
            line = journal.append({"id": f"i{n}", "status": "ok", "answer": "é"})
            assert json.loads(line) == {"id": f"i{n}", "status": "ok", "answer": "é"}
        journal.append({"id": "bad", "status": "error"})
        journal.close(finished=finished)
        return journal

    journal = asyncio.run(run(finished=False))
    assert sorted(Journal(tmp_path, "k" * 64).completed()) == ["i0", "i1", "i2"]
    assert journal.path.stat().st_mode & 0o777 == 0o600
    asyncio.run(run(finished=True))
    assert not journal.path.exists()
