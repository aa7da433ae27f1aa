"""A dropped connection, a refused one, a DNS failure and a real time-out each get their own message, against
local endpoints that do just that (``tests.support.broken_endpoints``), through the client's transport and
through the openai client's default httpx transport."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.llm.conftest import SECRET
from tests.support.broken_endpoints import UNRESOLVABLE, BrokenServer
from tests.support.ports import free_port
from ultra_llm.client import LLMClient
from ultra_llm.endpoint_errors import connection_failure
from ultra_llm.settings import LLMSettings

pytestmark = pytest.mark.anyio
TIMEOUT = 1.5


def settings_for(base_url: str, *, timeout: float = TIMEOUT) -> LLMSettings:
    mapping = {"model_id": "m", "base_url": base_url, "api_key": SECRET, "max_retries": 0, "timeout": timeout}
    mapping["max_workers"] = 1
    return LLMSettings.from_mapping(mapping, name="t", backoff_base=0.01, backoff_max=0.02)


async def failure(base_url: str, *, timeout: float = TIMEOUT) -> tuple[str, float]:
    """The error of one chat request to ``base_url`` and the seconds it took."""
    started = time.monotonic()
    async with LLMClient(settings_for(base_url, timeout=timeout)) as client:
        reply = await client.chat([{"role": "user", "content": "x"}], {}, prompt="p")
    assert reply.status == "error" and reply.attempts == 1
    return reply.error.removeprefix("gave up after 1 attempt: "), time.monotonic() - started


@pytest.mark.parametrize("mode", ["close", "drop"])
async def test_a_dropped_connection_is_reported_as_dropped_not_as_a_timeout(mode: str) -> None:
    with BrokenServer(mode) as server:
        error, _ = await failure(server.base_url, timeout=60)
        assert server.connections >= 1
    match = re.fullmatch(rf"127\.0\.0\.1:{server.port} closed the connection without a reply \(after (.+) s\)", error)
    assert match, error  # was "timed out after 60 s", after a fraction of a second
    assert float(match.group(1)) < 30  # a fraction of a second; the time-out is 60 s


async def test_a_refused_connection_is_reported_as_refused() -> None:
    port = free_port()
    error, took = await failure(f"http://127.0.0.1:{port}/v1", timeout=60)
    assert error == f"connection refused to 127.0.0.1:{port}" and took < 30  # not the 60 s time-out


async def test_an_unresolvable_host_is_reported_as_a_dns_failure() -> None:
    error, _ = await failure(f"http://{UNRESOLVABLE}:8000/v1", timeout=60)
    assert error == f"cannot resolve the host of {UNRESOLVABLE}:8000"


async def test_a_server_that_never_replies_is_a_real_timeout() -> None:
    with BrokenServer("silent") as server:
        error, took = await failure(server.base_url, timeout=0.5)
    assert error == "timed out after 0.5 s" and 0.45 <= took < 30


async def _httpx_failure(base_url: str, timeout: float) -> str:
    """The message for the openai client's own failure on its default httpx transport (no aiohttp)."""
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="x", timeout=timeout, max_retries=0)
    started = time.monotonic()
    try:
        await client.post("/chat/completions", body={"model": "m", "messages": []}, cast_to=object)
    except openai.APIConnectionError as exc:
        return connection_failure(exc, base_url, timeout, started)
    finally:
        await client.close()
    raise AssertionError("the request did not fail")


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        ("drop", "closed the connection without a reply (after "),
        ("refused", "connection refused to 127.0.0.1:"),
        ("dns", f"cannot resolve the host of {UNRESOLVABLE}:8000"),
        ("silent", "timed out after 0.5 s"),
    ],
)
async def test_the_default_httpx_transport_gets_the_same_messages(make: str, expected: str) -> None:
    servers: dict[str, Any] = {"drop": BrokenServer("drop"), "silent": BrokenServer("silent")}
    if make in servers:
        with servers[make] as server:
            error = await _httpx_failure(server.base_url, 0.5)
    elif make == "refused":
        error = await _httpx_failure(f"http://127.0.0.1:{free_port()}/v1", 0.5)
    else:
        error = await _httpx_failure(f"http://{UNRESOLVABLE}:8000/v1", 0.5)
    assert expected in error, error
