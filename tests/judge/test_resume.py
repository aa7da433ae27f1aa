"""A judging run killed with SIGKILL resumes from the cache without repeating any answered request."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from servers.judge.relevance.run import run_umbrela
from tests.judge.conftest import ROOT, SAMPLE, SECRET, call_job, llm_settings
from tests.support.openai_stub import OpenAIStub, request_digest

pytestmark = pytest.mark.anyio

CHILD = """
import asyncio, json, sys
from servers.judge.relevance.run import run_umbrela
from tests.judge.conftest import call_job
args = json.loads(sys.argv[1])
asyncio.run(call_job(run_umbrela, **args))
"""


def arguments(stub: OpenAIStub, tmp_path) -> dict:
    return {
        "queries_path": str(SAMPLE / "queries.jsonl"),
        "run_path": str(SAMPLE / "run.bm25.trec"),
        "corpus_path": str(SAMPLE / "corpus.jsonl"),
        "depth": 10,
        "judge_llm": llm_settings(stub, max_workers=4),
        "judge_cache": str(tmp_path / "cache.sqlite"),
        "save_path": str(tmp_path / "out"),
    }


def committed_digests(path) -> set[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT request FROM answers").fetchall()
    return {request_digest(json.loads(request)) for (request,) in rows}


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
async def test_killed_run_resumes_without_repeating(tmp_path) -> None:
    with OpenAIStub(latency=0.03) as stub:
        args = arguments(stub, tmp_path)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, json.dumps(args)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while stub.request_count < 60 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()
        sent_before = stub.request_count
        committed = committed_digests(tmp_path / "cache.sqlite")
        unique = 171  # 180 pairs, 9 of them the same passage text under another docid (one request each)
        assert 0 < len(committed) < unique
        assert sent_before - len(committed) <= 4  # at most the requests in flight were lost
        assert not list((tmp_path / "out").glob("*.json")) if (tmp_path / "out").exists() else True

        stub.reset()
        result = await call_job(run_umbrela, **args)
        resent = {request_digest(body) for body in stub.chat_requests()}
    assert result["counts"]["ok"] == 180
    assert stub.request_count == unique - len(committed)
    assert resent.isdisjoint(committed)  # nothing answered and committed was asked again
    assert result["usage"]["cache_hits"] == 180 - stub.request_count
    assert SECRET.encode() not in (tmp_path / "cache.sqlite").read_bytes()
