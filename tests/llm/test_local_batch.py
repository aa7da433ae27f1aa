"""Batched local generation: concurrent requests share batches by budget; batched greedy text equals one-by-one."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from tests.support.background import Finished, in_background
from tests.support.local_probes import BATCH_ROWS, NEEDED, probe, result
from ultra_llm.local import batching as local_batch
from ultra_llm.local import models as local


def test_concurrent_requests_are_batched_by_budget(monkeypatch) -> None:
    calls: list[tuple[list[str], int]] = []

    def fake_batch(loaded, conversations, max_tokens, *, temperature, top_p):
        calls.append(([c[0]["content"] for c in conversations], max_tokens))
        return [(c[0]["content"].upper(), 1, max_tokens) for c in conversations]

    monkeypatch.setattr(local, "load_chat_model", lambda model_id: ("tokenizer", "model"))
    monkeypatch.setattr(local, "generate_batch", fake_batch)

    async def main() -> list[tuple[str, int, int]]:
        asks = [("a", 10), ("b", 10), ("c", 20), ("d", 10)] + [(f"x{i}", 10) for i in range(8)]
        return await asyncio.gather(
            *(local_batch.chat("m", [{"role": "user", "content": t}], n, temperature=0.0, top_p=1.0) for t, n in asks)
        )

    results = asyncio.run(main())
    assert [r[0] for r in results[:4]] == ["A", "B", "C", "D"] and results[2][2] == 20
    # the oldest waiting request picks the budget; up to 8 requests of that budget go together
    assert calls == [(["a", "b", "d", "x0", "x1", "x2", "x3", "x4"], 10), (["c"], 20), (["x5", "x6", "x7"], 10)]


def test_a_failing_batch_fails_its_callers_only(monkeypatch) -> None:
    def fake_batch(loaded, conversations, max_tokens, *, temperature, top_p):
        if max_tokens == 5:
            raise RuntimeError("out of memory")
        return [("ok", 1, 1) for _ in conversations]

    monkeypatch.setattr(local, "load_chat_model", lambda model_id: ("tokenizer", "model"))
    monkeypatch.setattr(local, "generate_batch", fake_batch)

    async def main():
        one = local_batch.chat("m2", [{"role": "user", "content": "a"}], 5, temperature=0.0, top_p=1.0)
        two = local_batch.chat("m2", [{"role": "user", "content": "b"}], 6, temperature=0.0, top_p=1.0)
        return await asyncio.gather(one, two, return_exceptions=True)

    failed, fine = asyncio.run(main())
    assert isinstance(failed, RuntimeError) and fine == ("ok", 1, 1)


@pytest.mark.slow
@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in NEEDED), reason="the local-llm extra is not installed"
)
@in_background(probe("batch_and_single"))
def test_batched_greedy_text_equals_one_by_one(background_run: Finished) -> None:
    """SmolLM2 (tests/support/local_probes.py: batch_and_single) gives each row the same text and token counts in
    one batch as one by one."""
    assert background_run.done.returncode == 0, background_run.done.stderr[-2000:]
    got = result(background_run.folder, "batch_and_single")
    assert got["loaded_once"]  # loaded once per process
    batched, single = got["batched"], got["single"]
    assert len(batched) == len(single) == len(BATCH_ROWS)
    assert [b[0] for b in batched] == [s[0] for s in single]
    assert [b[1:] for b in batched] == [s[1:] for s in single]
