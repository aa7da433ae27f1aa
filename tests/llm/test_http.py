"""The lean ``send`` of ultra_llm.http: httpx's private attributes it relies on, and its public fallback."""

from __future__ import annotations

import pytest

from tests.llm.conftest import stub_settings
from tests.support.openai_stub import OpenAIStub, hashed_grade
from ultra_llm import http
from ultra_llm.client import LLMClient

openai = pytest.importorskip("openai")
pytest.importorskip("aiohttp")
pytestmark = pytest.mark.anyio


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_the_installed_client_still_has_the_private_attributes() -> None:
    """Fails when httpx (or the openai package's aiohttp client) renames what the lean path uses: look then."""
    client = openai.DefaultAioHttpClient(timeout=5)
    missing = [name for name in http.PRIVATE_ATTRIBUTES if not hasattr(client, name)]
    assert not missing, f"{type(client).__mro__} lost {missing}: update ultra_llm/http.py"
    assert callable(client._set_timeout)
    assert hasattr(client._transport, "handle_async_request")
    assert http.has_private_path(client)


@pytest.fixture
def public_sends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs sent through the openai client's public ``send`` (the one the lean ``send`` skips)."""
    sent: list[str] = []
    public = openai.DefaultAioHttpClient.send

    async def counted(self, request, **kwargs):
        sent.append(str(request.url))
        return await public(self, request, **kwargs)

    monkeypatch.setattr(openai.DefaultAioHttpClient, "send", counted)
    return sent


async def test_the_lean_path_is_taken_while_the_attributes_exist(stub: OpenAIStub, public_sends: list[str]) -> None:
    async with LLMClient(stub_settings(stub)) as client:
        reply = await client.chat(ask("one two"), {}, prompt="p")
    assert reply.status == "ok" and reply.text == hashed_grade({"messages": ask("one two")})
    assert public_sends == []  # straight to the transport


async def test_without_the_attributes_a_request_takes_the_public_path(
    stub: OpenAIStub, public_sends: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # as after a rename in httpx: the names the lean path looks for are gone
    monkeypatch.setattr(http, "PRIVATE_ATTRIBUTES", ("_transport_renamed", "_set_timeout_renamed"))
    lean = http.lean_http_client(openai, 5.0)
    assert lean is not None and not http.has_private_path(lean)
    await lean.aclose()
    async with LLMClient(stub_settings(stub)) as client:
        reply = await client.chat(ask("three four"), {}, prompt="p")
        embedded = await client.embed(["alpha"])
    assert reply.status == "ok" and reply.text == hashed_grade({"messages": ask("three four")})
    assert embedded.status == "ok" and len(embedded.vectors) == 1
    assert [url.rsplit("/", 1)[1] for url in public_sends] == ["completions", "embeddings"]
    assert [s.path for s in stub.served] == ["/v1/chat/completions", "/v1/embeddings"]
    assert stub.served[0].outcome == "ok"
