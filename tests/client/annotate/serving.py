"""Start ``ultra annotate`` as a real process on a free 127.0.0.1 port and wait until it answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.conftest import ROOT
from tests.support.ports import free_port

HOSTILE = '<img src=x onerror="window.pwned=1"></script><script>window.pwned=2</script>'


def write_dataset(folder: Path, n: int = 12, judge: bool = True) -> Path:
    """``n`` items of system A, the first with a hostile answer; judge scores when ``judge``."""
    rows = []
    for i in range(n):
        row = {"id": f"q{i}", "system": "A", "question": f"Question {i}?", "answer": HOSTILE if i == 0 else f"A{i}",
               "passages": [f"passage {i}"]}  # fmt: skip
        if judge:
            row |= {"judge": round(0.1 + 0.8 * ((i * 7) % n) / n, 3), "judge_reasoning": f"reason {i}"}
        rows.append(row)
    path = folder / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@contextmanager
def annotate_server(folder: Path, *args: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """``ultra annotate ARGS --port P`` run in ``folder``; yields (base URL, process); stopped at the end."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(ROOT / "ultra.py"), "annotate", *args, "--port", str(port)]
    out = subprocess.PIPE
    process = subprocess.Popen(command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                httpx.get(base + "/api/progress", timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"ultra annotate did not start: {process.stdout.read()}") from None
                time.sleep(0.1)
        yield base, process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=20)


class Client:
    """An HTTP client that reads the CSRF token from the page, as a script using the API does."""

    def __init__(self, base: str) -> None:
        self.http = httpx.Client(base_url=base, timeout=30)
        page = self.http.get("/").text
        self.csrf = page.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]

    def next(self) -> dict | None:
        return self.http.get("/api/next").json()["item"]

    def post(self, path: str, body: dict, *, csrf: bool = True) -> httpx.Response:
        headers = {"X-CSRF-Token": self.csrf} if csrf else {}
        return self.http.post(path, json=body, headers=headers)

    def label(self, item_id: str, value: float, **extra: object) -> httpx.Response:
        return self.post("/api/label", {"item_id": item_id, "value": value, **extra})
