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


def kill_after_requests(stub: OpenAIStub, args: dict, requests: int) -> None:
    """Run the UMBRELA job of ``args`` in a child process and SIGKILL it once the stub has had ``requests``."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, json.dumps(args)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while stub.request_count < requests and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()


def committed_digests(path) -> set[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT request FROM answers").fetchall()
    return {request_digest(json.loads(request)) for (request,) in rows}


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
async def test_killed_run_resumes_without_repeating(tmp_path) -> None:
    with OpenAIStub(latency=0.03) as stub:
        args = arguments(stub, tmp_path)
        kill_after_requests(stub, args, 60)
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


def committed_requests(path) -> set[tuple[str, str]]:
    """(model, request digest) of every answer in the cache: a jury's members ask the same messages."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT model_id, request FROM answers").fetchall()
    return {(model, request_digest(json.loads(request))) for model, request in rows}


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
async def test_a_killed_jury_resumes_without_repeating_any_members_request(tmp_path) -> None:
    with OpenAIStub(latency=0.03) as stub:
        args = arguments(stub, tmp_path)
        members = [{"base_url": stub.base_url, "model_id": f"member-{m}", "api_key": SECRET} for m in "abc"]
        args["judge_llm"] = {**args["judge_llm"], "jury": members, "jury_aggregate": "median"}
        kill_after_requests(stub, args, 90)
        committed = committed_requests(tmp_path / "cache.sqlite")
        assert {model for model, _ in committed} == {"member-a", "member-b", "member-c"}  # all three ran at once
        assert 0 < len(committed) < 3 * 171
        assert stub.request_count - len(committed) <= 3 * 4  # at most each member's requests in flight were lost

        stub.reset()
        result = await call_job(run_umbrela, **args)
        resent = {(body["model"], request_digest(body)) for body in stub.chat_requests()}
    assert result["counts"]["ok"] == 180
    assert stub.request_count == 3 * 171 - len(committed)
    assert resent.isdisjoint(committed)  # no member asked again what it had answered
    assert result["usage"]["cache_hits"] == 3 * 180 - stub.request_count
