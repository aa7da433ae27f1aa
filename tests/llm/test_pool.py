"""Endpoint pools against three real local stub servers: routing by capacity, draining, routing-free results."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from servers.judge.common.inputs import Pair
from servers.judge.common.prompting import Prompts
from servers.judge.relevance import umbrela
from tests.llm.conftest import SECRET
from tests.support.openai_stub import OpenAIStub
from ultra_base.errors import InputError
from ultra_llm.cache import AnswerCache
from ultra_llm.client import LLMClient
from ultra_llm.settings import LLMSettings

pytestmark = pytest.mark.anyio

CAPACITIES = (1, 2, 4)
PAIRS = [
    Pair(f"q{i // 6}", f"query about topic {i // 6}", f"d{i}", f"passage number {i} on a topic", i % 6 + 1)
    for i in range(70)
]


@pytest.fixture
def stubs() -> Iterator[list[OpenAIStub]]:
    servers = [OpenAIStub(latency=0.03).start() for _ in CAPACITIES]
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


def pool_settings(stubs: list[OpenAIStub], **overrides: Any) -> LLMSettings:
    endpoints = [
        {"base_url": s.base_url, "model_id": "stub-judge", "api_key": f"{SECRET}-{i}", "max_concurrency": c}
        for i, (s, c) in enumerate(zip(stubs, CAPACITIES, strict=True))
    ]
    mapping = {"endpoints": endpoints, "timeout": 5, "max_retries": 3, "max_workers": 1, "drain_after": 3}
    mapping |= {"cool_down": 60, **overrides}
    return LLMSettings.from_mapping(mapping, name="judge_llm", backoff_base=0.01, backoff_max=0.05)


async def judge(settings: LLMSettings, cache: AnswerCache | None = None, progress: Any = None) -> tuple[dict, dict]:
    async with LLMClient(settings, cache) as client:
        judgments = await umbrela.judge_pairs(
            PAIRS, client, prompts=Prompts.as_written(), max_retries=2, progress=progress
        )
        usage = client.usage.as_dict()
    assert all(j.status == "ok" for j in judgments), [j.error for j in judgments if j.status != "ok"][:3]
    return {(j.qid, j.docid): j.score for j in judgments}, usage


async def test_requests_follow_capacity_and_each_key_goes_to_its_endpoint(stubs: list[OpenAIStub]) -> None:
    settings = pool_settings(stubs)
    assert settings.max_workers == sum(CAPACITIES)
    _, usage = await judge(settings)
    served = [s.request_count for s in stubs]
    assert [s.max_in_flight for s in stubs] == list(CAPACITIES)  # each endpoint full, none past its capacity
    assert served[0] < served[1] < served[2] and sum(served) == len(PAIRS)
    assert served[2] > 0.4 * len(PAIRS)  # about 4/7 of the work goes to the largest endpoint
    counts = [usage["endpoints"][f"127.0.0.1:{s.port}"] for s in stubs]  # host:port, never a key or a path
    assert [c["requests"] for c in counts] == served and [c["ok"] for c in counts] == served
    for i, server in enumerate(stubs):
        assert {r.authorization for r in server.served} == {f"Bearer {SECRET}-{i}"}  # a key goes to its endpoint only


async def test_a_failing_endpoint_is_drained_and_its_requests_retried_elsewhere(stubs: list[OpenAIStub]) -> None:
    big = stubs[2]

    def fail_midway(done: int, total: int) -> None:
        if done == 20:  # the largest endpoint starts failing mid-run
            big.add_fault("status", status=503, message="overloaded")

    scores, usage = await judge(pool_settings(stubs), progress=fail_midway)
    failing = usage["endpoints"][f"127.0.0.1:{big.port}"]
    failed_there = [r for r in big.served if r.outcome == "status"]
    assert failing["drained"] == 1 and failing["failed"] == len(failed_there) >= 3
    assert len(failed_there) <= CAPACITIES[2] + 3  # drained after 3 in a row: only the ones in flight then failed too
    drained_at = failed_there[2].ended
    late = [r for r in big.served if r.started > drained_at]  # only those in flight when the client drained it
    assert len(late) <= CAPACITIES[2]  # nothing new during the 60 s cool-down (a margin by count, not by clock)
    assert usage["errors"] == 0 and usage["requests"] == len(PAIRS) + len(failed_there)
    others = sum(usage["endpoints"][f"127.0.0.1:{s.port}"]["ok"] for s in stubs[:2])
    assert others + failing["ok"] == len(PAIRS)
    with OpenAIStub(latency=0.0) as single:
        alone = LLMSettings.from_mapping(
            {"base_url": single.base_url, "model_id": "stub-judge", "timeout": 5, "max_retries": 1, "max_workers": 8},
            name="judge_llm",
        )
        single_scores, _ = await judge(alone)
    assert scores == single_scores  # the same grades whichever endpoint answered


async def test_the_cache_does_not_depend_on_the_endpoint(stubs: list[OpenAIStub], tmp_path) -> None:
    cache = AnswerCache(tmp_path / "cache.sqlite")
    with OpenAIStub() as single:
        alone = LLMSettings.from_mapping(
            {"base_url": single.base_url, "model_id": "stub-judge", "timeout": 5, "max_retries": 1, "max_workers": 8},
            name="judge_llm",
        )
        first, _ = await judge(alone, cache)
    again, usage = await judge(pool_settings(stubs), cache)
    cache.close()
    assert again == first and usage["cache_hits"] == len(PAIRS) and usage["requests"] == 0
    assert sum(s.request_count for s in stubs) == 0


async def test_requests_wait_while_every_endpoint_is_drained(stubs: list[OpenAIStub]) -> None:
    for server in stubs:
        server.add_fault("status", status=500, times=1)
    settings = pool_settings(stubs, drain_after=1, cool_down=0.3, max_retries=3)
    async with LLMClient(settings) as client:
        started = asyncio.get_running_loop().time()
        reply = await client.chat([{"role": "user", "content": "x"}], {}, prompt="p")
        waited = asyncio.get_running_loop().time() - started
    assert reply.status == "ok" and reply.attempts == 4  # three endpoints failed once each, then one came back
    assert [c["drained"] for c in client.usage.endpoints.values()] == [1, 1, 1]
    assert waited >= 0.25  # the fourth attempt waited for a cool-down to end


def test_pool_settings_are_checked() -> None:
    base = {"timeout": 5, "max_retries": 1, "max_workers": 2, "drain_after": 3, "cool_down": 30}
    two = [{"base_url": "http://a:1/v1", "model_id": "m1"}, {"base_url": "http://b:1/v1", "model_id": "m2"}]
    with pytest.raises(InputError, match=r"judge_llm\.endpoints serve different models \['m1', 'm2'\]"):
        LLMSettings.from_mapping({**base, "endpoints": two}, name="judge_llm")
    with pytest.raises(InputError, match=r"judge_llm\.endpoints\[0\] has unknown keys \['url'\]"):
        LLMSettings.from_mapping({**base, "endpoints": [{"url": "x"}]}, name="judge_llm")
    with pytest.raises(InputError, match=r"judge_llm\.endpoints\[1\]\.max_concurrency must be >= 1"):
        bad = [two[0], {"base_url": "http://b:1/v1", "max_concurrency": 0}]
        LLMSettings.from_mapping({**base, "model_id": "m1", "endpoints": bad}, name="judge_llm")
    keyed = [{**two[0], "api_key": SECRET, "weight": 2}, {**two[1], "model_id": "m1"}]
    for loose, shown in ((1.5, "1.5"), (True, "true"), ("3", "'3'")):  # refused, as before a step: not 1, 1 and 3
        with pytest.raises(
            InputError, match=rf"judge_llm\.endpoints\[1\]\.max_concurrency must be a whole number, got {shown}$"
        ):
            LLMSettings.from_mapping(
                {**base, "endpoints": [keyed[0], {**keyed[1], "max_concurrency": loose}]}, name="judge_llm"
            )
    for loose in (1.5, True, "3"):
        with pytest.raises(InputError, match=r"judge_llm\.max_workers must be a whole number"):
            LLMSettings.from_mapping({**base, "max_workers": loose, "endpoints": keyed}, name="judge_llm")
    whole = LLMSettings.from_mapping(
        {**base, "endpoints": [keyed[0], {**keyed[1], "max_concurrency": 3.0}]}, name="judge_llm"
    )
    assert [e.max_concurrency for e in whole.endpoints] == [2, 3]  # 3.0 is the whole number 3, as YAML may write it
    settings = LLMSettings.from_mapping({**base, "endpoints": keyed}, name="judge_llm")
    assert settings.model_id == "m1" and settings.max_workers == 4  # the default capacity: max_workers each
    assert SECRET not in repr(settings) and SECRET not in str(settings.public())
    assert settings.pool()[1].api_key == ""  # an endpoint without api_key gets none


async def test_weights_share_equal_endpoints_unequally() -> None:
    from ultra_llm.completions import Usage
    from ultra_llm.pool import EndpointPool
    from ultra_llm.settings import Endpoint

    endpoints = (Endpoint("http://a:1/v1", "m", "", 8, 3.0), Endpoint("http://b:1/v1", "m", "", 8, 1.0))
    pool = EndpointPool(endpoints, drain_after=0, cool_down=0, usage=Usage())
    held = [await pool.acquire() for _ in range(8)]
    assert [m.outstanding for m in pool.members] == [6, 2]  # 3:1 while neither is full
    held += [await pool.acquire() for _ in range(8)]
    assert [m.outstanding for m in pool.members] == [8, 8]  # then every slot, never past a capacity
    waiter = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    pool.release(held[0], "ok")
    assert (await asyncio.wait_for(waiter, 1)) is held[0]  # the freed slot goes to the waiting request


def test_a_pool_needs_no_default_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from servers.judge.common.llm_settings import judge_settings

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("POOL_KEY", SECRET)
    pool = [{"base_url": "http://a:1/v1", "api_key": "${POOL_KEY}"}, {"base_url": "http://b:1/v1"}]
    settings = judge_settings({"model_id": "m", "endpoints": pool})
    assert [e.api_key for e in settings.pool()] == [SECRET, ""]  # the default ${OPENAI_API_KEY} is not needed
    assert (settings.drain_after, settings.cool_down) == (3, 30)  # parameter.yaml's
