"""nuggetize in batch mode: each stage waits for the answers it builds on, one round of batches per create
window, then score, then assign; the result equals an online run, and a rerun uploads nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servers.judge.nuggets.run import run_nuggetize
from tests.judge.conftest import call_job, llm_settings
from tests.judge.nugget_stub import nugget_responder, stages
from tests.support.batch_server import BatchStub

pytestmark = pytest.mark.anyio

PASSAGES = {f"d{i}": (f"vital fact {i}" if i % 3 == 0 else f"fact {i}") for i in range(1, 26)}  # 3 windows
ANSWERS = {"runA": json.dumps({"fact 1": "support", "vital fact 3": "partial_support"}), "runB": "{}"}
BATCH = {"mode": "batch", "batch_max_requests": 1000, "batch_max_bytes": 10**6, "batch_poll_interval": 0.05}


async def nuggetize(server: BatchStub, tmp_path: Path, **llm: object) -> dict:
    return await call_job(
        run_nuggetize,
        query="q?", passages=PASSAGES, answers=ANSWERS, judge_llm=llm_settings(server, **llm),
        judge_cache=str(tmp_path / "cache.sqlite"), save_path=str(tmp_path / "out"),
    )  # fmt: skip


async def test_nuggetize_in_batch_mode_equals_online_and_reruns_from_the_cache(tmp_path: Path) -> None:
    with BatchStub(responder=nugget_responder) as server:
        batched = await nuggetize(server, tmp_path / "batch", **BATCH)
        assert server.request_count == 0  # nothing online
        # 3 create windows one after another, then 3 score requests (10 nuggets each), then 3 per answer to assign
        assert server.batch_lines == [1, 1, 1, 3, 6]
        rerun = await nuggetize(server, tmp_path / "batch", **BATCH)
        assert len(server.batch_lines) == 5 and rerun["usage"]["requests"] == 0
        online = await nuggetize(server, tmp_path / "online")
        assert stages(server.chat_requests()) == {"create": 3, "score": 3, "assign": 6}
    for result in (rerun, online):
        assert result["per_query"] == batched["per_query"] and result["aggregate"] == batched["aggregate"]
    assert batched["counts"]["nuggets"] == 25 and batched["failed"]["count"] == 0
    assert batched["aggregate"]["runA"]["all"] == pytest.approx(1.5 / 25)
