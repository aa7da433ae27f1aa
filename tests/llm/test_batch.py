"""Batch mode (``judge_llm.mode: batch``) against the local Batch API server: splitting at the limits, cache
hits, partial failures and expiry, progress while polling, and a SIGKILLed run resumed without resubmission."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from servers.judge.relevance.run import run_umbrela
from tests.judge.conftest import ROOT, SAMPLE, SECRET, call_job, llm_settings
from tests.support.batch_server import BatchStub
from ultra_base.errors import InputError

pytestmark = pytest.mark.anyio

PAIRS, UNIQUE = 180, 171  # the sample's pairs; 9 repeat a passage text under another docid (one request each)
CHILD = """
import asyncio, json, sys
from servers.judge.relevance.run import run_umbrela
from tests.judge.conftest import call_job
asyncio.run(call_job(run_umbrela, **json.loads(sys.argv[1])))
"""


@pytest.fixture
def server() -> Iterator[BatchStub]:
    with BatchStub(max_requests=1000, max_bytes=10**6) as stub:
        yield stub


def arguments(server: BatchStub, tmp_path: Path, **llm: Any) -> dict[str, Any]:
    batch = {"mode": "batch", "batch_max_requests": 1000, "batch_max_bytes": 10**6, "batch_poll_interval": 0.05}
    return {
        "queries_path": str(SAMPLE / "queries.jsonl"),
        "run_path": str(SAMPLE / "run.bm25.trec"),
        "corpus_path": str(SAMPLE / "corpus.jsonl"),
        "depth": 10,
        "judge_llm": llm_settings(server, max_retries=2, **{**batch, **llm}),
        "judge_cache": str(tmp_path / "cache.sqlite"),
        "save_path": str(tmp_path / "out"),
        "max_failed_fraction": 0.5,
    }


async def judge(server: BatchStub, tmp_path: Path, **llm: Any) -> dict[str, Any]:
    return await call_job(run_umbrela, **arguments(server, tmp_path, **llm), backoff_base=0.01)


def uploaded(server: BatchStub) -> list[bytes]:
    return [path.read_bytes() for name, path in sorted(server.files.items()) if "-" in name and "batch" not in name]


async def test_batches_split_at_the_limits_and_grade_as_online(server: BatchStub, tmp_path: Path) -> None:
    server.max_requests, server.max_bytes = 60, 40_000  # a batch past either limit fails on the server
    result = await judge(server, tmp_path, batch_max_requests=60, batch_max_bytes=40_000)
    files = uploaded(server)
    assert server.uploads == len(server.created) == len(files) >= 5  # ~2 KB a request: bytes split before count
    assert all(len(f) <= 40_000 and f.count(b"\n") <= 60 for f in files)
    assert sum(server.batch_lines) == UNIQUE and all(b["status"] == "completed" for b in server.batches.values())
    assert result["counts"]["ok"] == PAIRS and result["usage"]["requests"] == UNIQUE
    assert result["usage"]["endpoints"][f"127.0.0.1:{server.port}"]["ok"] == UNIQUE
    for line in files[0].splitlines():  # the Batch API's input format, no key anywhere
        request = json.loads(line)
        assert set(request) == {"custom_id", "method", "url", "body"} and request["url"] == "/v1/chat/completions"
        assert request["body"]["model"] == "stub-judge" and request["body"]["messages"]
    assert not [f for f in files if SECRET.encode() in f]
    assert SECRET.encode() not in (tmp_path / "cache.sqlite").read_bytes()

    server.reset()  # the same pairs online, through /v1/chat/completions
    online = await call_job(
        run_umbrela, **{**arguments(server, tmp_path / "online"), "judge_llm": llm_settings(server)}
    )
    assert online["scores"] == result["scores"] and server.request_count == UNIQUE


async def test_a_cache_hit_skips_the_upload(server: BatchStub, tmp_path: Path) -> None:
    first = await judge(server, tmp_path)
    uploads, created = server.uploads, list(server.created)
    again = await judge(server, tmp_path)
    assert (server.uploads, server.created) == (uploads, created)
    assert again["usage"]["requests"] == 0 and again["usage"]["cache_hits"] == PAIRS
    assert again["scores"] == first["scores"]


async def test_failed_items_are_retried_then_reported_never_scored(server: BatchStub, tmp_path: Path) -> None:
    corpus = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    bad_text = corpus[0]["text"][:60]
    server.fail_items(bad_text)
    result = await judge(server, tmp_path)
    assert len(server.created) == 3  # the first batch, then max_retries = 2 more for the failed requests
    first, *retries = server.batch_lines
    assert first == UNIQUE and retries[0] == retries[1] > 0  # only the failed requests are sent again
    errors = [f for f in result["failures"] if f["status"] == "error"]
    assert result["counts"]["error"] == len(errors) >= retries[0]
    assert result["counts"]["ok"] == PAIRS - len(errors)
    assert all("failed in 3 batches" in f["error"] and "injected item failure" in f["error"] for f in errors)
    assert all(result["scores"][f["qid"]][f["docid"]] is None for f in errors)
    qrels = Path(result["llm_qrels_path"]).read_text()
    assert all(f" {f['docid']} " not in qrels for f in errors)  # a failure is never a grade


async def test_an_expired_batch_is_finished_in_a_new_one(server: BatchStub, tmp_path: Path) -> None:
    server.expire_next(answered=40)
    result = await judge(server, tmp_path)
    assert [b["status"] for b in server.batches.values()] == ["expired", "completed"]
    assert server.batch_lines == [UNIQUE, UNIQUE - 40]
    assert result["counts"]["ok"] == PAIRS and result["usage"]["requests"] == UNIQUE + UNIQUE - 40  # sent twice


async def test_progress_is_reported_while_polling(server: BatchStub, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    server.hold()
    args = arguments(server, tmp_path)
    task = asyncio.create_task(call_job(run_umbrela, **args, progress=lambda done, total: seen.append((done, total))))
    deadline = time.monotonic() + 30
    while (UNIQUE // 2, UNIQUE) not in seen and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    server.release()
    result = await task
    assert (UNIQUE // 2, UNIQUE) in seen and (UNIQUE, UNIQUE) in seen  # half done while held, then all
    assert result["counts"]["ok"] == PAIRS


def open_batches(cache: Path) -> list[tuple[str, str]]:
    try:
        with sqlite3.connect(cache) as db:
            return db.execute("SELECT batch_id, state FROM batches").fetchall()
    except sqlite3.OperationalError:
        return []  # not created yet


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
async def test_a_run_killed_while_its_batch_runs_resumes_without_resubmitting(
    server: BatchStub, tmp_path: Path
) -> None:
    server.hold()
    args = arguments(server, tmp_path)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, json.dumps(args)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not open_batches(tmp_path / "cache.sqlite") and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)  # the child is polling the batch now
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()
    assert open_batches(tmp_path / "cache.sqlite") == [("batch_1", "open")] and server.uploads == 1
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.json"))

    server.release()
    result = await call_job(run_umbrela, **args, backoff_base=0.01)
    assert server.uploads == 1 and server.created == ["batch_1"]  # followed, not sent again
    assert open_batches(tmp_path / "cache.sqlite") == [("batch_1", "done:completed")]
    assert result["counts"]["ok"] == PAIRS and result["usage"]["cache_hits"] == PAIRS - UNIQUE
    assert result["usage"]["requests"] == UNIQUE  # the answers came from this run's (resumed) batch


async def test_batch_mode_needs_a_cache(server: BatchStub, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="need an answer cache"):
        await call_job(run_umbrela, **{**arguments(server, tmp_path), "judge_cache": ""})
    with pytest.raises(InputError, match=r"judge_llm\.mode must be one of \['online', 'batch'\]"):
        await judge(server, tmp_path, mode="offline")


async def test_a_recorded_batch_the_endpoint_no_longer_knows_is_sent_again(server: BatchStub, tmp_path: Path) -> None:
    first = await judge(server, tmp_path)
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:  # as if batch_1 had been deleted before its results came
        db.execute("DELETE FROM answers")
        db.execute("UPDATE batches SET batch_id = 'batch_gone', state = 'open'")
        db.execute("UPDATE batch_items SET batch_id = 'batch_gone'")
    again = await judge(server, tmp_path)
    assert server.created == ["batch_1", "batch_2"] and server.batch_lines == [UNIQUE, UNIQUE]
    assert open_batches(tmp_path / "cache.sqlite") == [("batch_gone", "done:lost"), ("batch_2", "done:completed")]
    assert again["scores"] == first["scores"]
