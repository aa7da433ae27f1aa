"""The LLM client against the local stub server: retries, backoff, concurrency, cache, accounting."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.llm.conftest import SECRET, stub_settings
from tests.support.openai_stub import OpenAIStub, hashed_grade
from tests.support.ports import free_port
from ultra_llm.cache import AnswerCache
from ultra_llm.client import LLMClient

pytestmark = pytest.mark.anyio
settings = stub_settings


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


async def test_plain_answer_counts_tokens(stub: OpenAIStub) -> None:
    async with LLMClient(settings(stub)) as client:
        reply = await client.chat(ask("one two three"), {"temperature": 0}, prompt="p@1")
    assert reply.status == "ok"
    assert reply.text == hashed_grade({"messages": ask("one two three")})
    assert (reply.prompt_tokens, reply.completion_tokens) == (3, 3)  # the stub counts words
    assert client.usage.as_dict()["total_tokens"] == 6
    assert stub.served[0].authorization == f"Bearer {SECRET}"  # the key is sent to the endpoint, nowhere else
    # the openai client's telemetry headers are left out (each costs CPU per request at high concurrency)
    assert not [name for name in stub.served[0].header_names if name.startswith("x-stainless")]
    assert {"authorization", "content-type", "content-length"} <= set(stub.served[0].header_names)


@pytest.mark.parametrize("kind", ["malformed", "truncated"])
async def test_broken_replies_are_retried(stub: OpenAIStub, kind: str) -> None:
    stub.add_fault(kind, times=2)
    async with LLMClient(settings(stub)) as client:
        reply = await client.chat(ask("x"), {}, prompt="p")
    assert reply.status == "ok" and reply.attempts == 3
    assert stub.request_count == 3


async def test_server_errors_retried_then_reported(stub: OpenAIStub) -> None:
    stub.add_fault("status", status=503, message="overloaded")
    async with LLMClient(settings(stub, max_retries=2)) as client:
        reply = await client.chat(ask("x"), {}, prompt="p")
    assert reply.status == "error"
    assert "503" in reply.error and "overloaded" in reply.error
    assert stub.request_count == 3  # 1 + 2 retries, bounded


async def test_429_honours_retry_after(stub: OpenAIStub) -> None:
    stub.add_fault("status", status=429, headers={"Retry-After": "1"}, times=1, message="slow down")
    async with LLMClient(settings(stub)) as client:
        reply = await client.chat(ask("x"), {}, prompt="p")
    assert reply.status == "ok" and reply.attempts == 2
    first, second = stub.served
    assert second.started - first.started >= 0.95  # waited as told, not the 0.01 s backoff


async def test_other_4xx_fail_at_once_with_the_server_message(stub: OpenAIStub) -> None:
    stub.add_fault("status", status=401, message=f"Incorrect API key provided: {SECRET}")
    async with LLMClient(settings(stub)) as client:
        reply = await client.chat(ask("x"), {}, prompt="p")
    assert reply.status == "error" and reply.attempts == 1
    assert "401" in reply.error and "Incorrect API key" in reply.error
    assert SECRET not in reply.error  # even when the server echoes it


async def test_timeouts_are_retried(stub: OpenAIStub) -> None:
    stub.add_fault("hang", seconds=60, times=1)
    async with LLMClient(settings(stub, timeout=0.5)) as client:
        started = time.monotonic()
        reply = await client.chat(ask("x"), {}, prompt="p")
    assert reply.status == "ok" and reply.attempts == 2
    assert 0.4 < time.monotonic() - started < 20  # about 0.5 s: the hung request (30 s) was given up, not waited out


async def test_rejected_parameter_is_dropped_once(stub: OpenAIStub) -> None:
    stub.add_fault(
        "status", status=400, message="Unsupported parameter: 'seed' is not supported with this model.", times=1
    )
    async with LLMClient(settings(stub)) as client:
        first = await client.chat(ask("a"), {"seed": 42, "temperature": 0}, prompt="p")
        second = await client.chat(ask("b"), {"seed": 42, "temperature": 0}, prompt="p")
    assert first.status == second.status == "ok"
    assert client.dropped == {"seed"}
    bodies = stub.chat_requests()
    assert "seed" in bodies[0] and all("seed" not in body for body in bodies[1:])
    assert all(body["temperature"] == 0 for body in bodies)


async def test_concurrency_never_above_max_workers(stub: OpenAIStub) -> None:
    stub.latency = 0.05
    stub.add_fault("status", status=500, times=5)
    async with LLMClient(settings(stub, max_workers=3)) as client:
        replies = await asyncio.gather(*(client.chat(ask(f"item {i}"), {}, prompt="p") for i in range(30)))
    assert all(r.status == "ok" for r in replies)
    assert stub.max_in_flight == 3
    assert stub.request_count == 35


async def test_cache_makes_the_second_run_send_nothing(stub: OpenAIStub, tmp_path) -> None:
    path = tmp_path / "cache.sqlite"
    items = [ask(f"question {i}") for i in range(12)]
    cache = AnswerCache(path)
    async with LLMClient(settings(stub), cache) as client:
        first = await asyncio.gather(*(client.chat(m, {"temperature": 0}, prompt="p@1") for m in items))
    cache.close()
    assert stub.request_count == 12 and len(AnswerCache(path)) == 12
    cache = AnswerCache(path)
    async with LLMClient(settings(stub), cache) as client:
        second = await asyncio.gather(*(client.chat(m, {"temperature": 0}, prompt="p@1") for m in items))
        changed = await client.chat(items[0], {"temperature": 0}, prompt="p@2")  # a new prompt version is a new key
    assert stub.request_count == 13
    assert [r.text for r in second] == [r.text for r in first] and all(r.cached for r in second)
    assert not changed.cached
    usage = client.usage.as_dict()
    assert usage["cache_hits"] == 12 and usage["requests"] == 1
    assert usage["cached_prompt_tokens"] == sum(r.prompt_tokens for r in first)
    assert SECRET.encode() not in path.read_bytes()


async def test_embeddings(stub: OpenAIStub) -> None:
    async with LLMClient(settings(stub)) as client:
        reply = await client.embed(["alpha", "beta", "alpha"])
    assert reply.status == "ok" and len(reply.vectors) == 3
    assert reply.vectors[0] == reply.vectors[2] != reply.vectors[1]
    assert sum(v * v for v in reply.vectors[0]) == pytest.approx(1.0)


async def test_reasoning_models_get_no_temperature(stub: OpenAIStub) -> None:
    async with LLMClient(settings(stub, reasoning=True)) as client:
        await client.chat(ask("x"), {"temperature": 0, "top_p": 1, "max_tokens": 100}, prompt="p")
    body = stub.chat_requests()[0]
    assert "temperature" not in body and "top_p" not in body and body["max_completion_tokens"] >= 1000


async def test_a_redirect_is_followed(stub: OpenAIStub) -> None:
    location = f"{stub.base_url}/chat/completions?moved=1"
    stub.add_fault("status", status=307, headers={"Location": location}, times=1, message="moved")
    async with LLMClient(settings(stub)) as client:
        reply = await client.chat(ask("one two"), {}, prompt="p")
    assert reply.status == "ok" and reply.attempts == 1
    assert len(stub.served) == 2 and [s.outcome for s in stub.served] == ["status", "ok"]


async def test_refused_connection_is_reported_as_refused_not_as_a_timeout() -> None:
    from ultra_llm.settings import LLMSettings

    port = free_port()  # a port of 127.0.0.1 that nothing listens on
    mapping = {"model_id": "m", "base_url": f"http://127.0.0.1:{port}/v1", "api_key": SECRET}
    mapping |= {"max_retries": 2, "max_workers": 1}
    settings = LLMSettings.from_mapping({**mapping, "timeout": 120}, name="t", backoff_base=0.01, backoff_max=0.02)
    started = time.monotonic()
    async with LLMClient(settings) as client:
        reply = await client.chat(ask("x"), {}, prompt="p")
    assert reply.status == "error" and reply.attempts == 3  # refusals are retried like other connection errors
    assert reply.error == f"gave up after 3 attempts: connection refused to 127.0.0.1:{port}"
    assert time.monotonic() - started < 60  # well under the 120 s time-out: refused at once, not timed out


async def test_a_real_timeout_is_still_reported_as_one(stub: OpenAIStub) -> None:
    stub.add_fault("hang", seconds=5)
    async with LLMClient(settings(stub, timeout=0.3, max_retries=0)) as client:
        reply = await client.chat(ask("x"), {}, prompt="p")
    assert reply.error == "gave up after 1 attempt: timed out after 0.3 s"
