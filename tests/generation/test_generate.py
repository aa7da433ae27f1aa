"""The generation server against the local OpenAI-compatible stub: order, usage, cache, failures."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from servers.generation import server
from servers.generation.tools import generate
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_kit.settings import defaults

pytestmark = pytest.mark.anyio


def echo(request: dict) -> str:
    return "\\boxed{" + content_of(request).upper() + "}"


def settings(stub: OpenAIStub, tmp_path: Path, **extra) -> dict:
    llm = {"backend": "openai", "base_url": stub.base_url, "model_id": "stub-gen", "api_key": "k", "max_retries": 1}
    return {
        "generation_llm": llm,
        "generation_cache": str(tmp_path / "cache.sqlite"),
        "save_path": str(tmp_path / "gen"),
        **extra,
    }


async def test_answers_in_order_with_usage_and_cache(tmp_path: Path) -> None:
    prompts = [f"question number {i}" for i in range(12)]
    with OpenAIStub(echo, latency=0.02) as stub:
        async with Client(server.SPEC.create_app()) as client:
            first = await client.call_tool("generate", {"prompt_ls": prompts, **settings(stub, tmp_path)})
            assert not first.is_error, first.content
            data = first.structured_content
            assert data["ans_ls"] == ["\\boxed{" + p.upper() + "}" for p in prompts]
            usage = data["generate_info"]["usage"]
            assert usage["prompt_tokens"] == 3 * 12 and usage["completion_tokens"] == 3 * 12  # the stub counts words
            assert stub.max_in_flight > 1  # concurrent requests
            count = stub.request_count
            second = await client.call_tool("generate", {"prompt_ls": prompts, **settings(stub, tmp_path)})
            assert second.structured_content["ans_ls"] == data["ans_ls"]
            assert second.structured_content["generate_info"]["usage"]["cache_hits"] == 12
            assert stub.request_count == count  # all answered from the cache
    saved = Path(data["result_path"]).read_text().splitlines()
    assert len(saved) == 12


async def test_system_prompt_and_sampling_reach_the_endpoint(tmp_path: Path) -> None:
    with OpenAIStub(echo) as stub:
        async with Client(server.SPEC.create_app()) as client:
            await client.call_tool(
                "generate",
                {
                    "prompt_ls": ["hi"],
                    **settings(
                        stub,
                        tmp_path,
                        generation_cache="",
                        system_prompt="be brief",
                        sampling_params={"temperature": 0.5, "max_tokens": 7},
                    ),
                },
            )
        (body,) = stub.chat_requests()
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert (body["temperature"], body["max_tokens"], body["model"]) == (0.5, 7, "stub-gen")


async def test_partial_and_total_failures(tmp_path: Path) -> None:
    with OpenAIStub(echo) as stub:
        stub.add_fault("status", status=400, message="bad prompt", match="poison")
        async with Client(server.SPEC.create_app()) as client:
            partial = await client.call_tool(
                "generate", {"prompt_ls": ["fine", "poison", "ok"], **settings(stub, tmp_path, generation_cache="")}
            )
            assert partial.structured_content["ans_ls"] == ["\\boxed{FINE}", "", "\\boxed{OK}"]
            assert partial.structured_content["generate_info"]["errors"] == 1
            stub.add_fault("status", status=401, message="Incorrect API key")
            total = await client.call_tool(
                "generate", {"prompt_ls": ["a"], **settings(stub, tmp_path, generation_cache="")}
            )
            assert (
                total.is_error
                and "401" in total.content[0].text
                and "every generation request failed" in total.content[0].text
            )


async def test_settings_errors_name_our_settings(tmp_path: Path) -> None:
    async with Client(server.SPEC.create_app()) as client:
        bad = await client.call_tool("generation_init", {"generation_llm": {"backend": "openai", "model_id": "x"}})
        assert bad.is_error and "generation_llm" in bad.content[0].text and "judge_llm" not in bad.content[0].text
        unknown = await client.call_tool("generation_init", {"generation_llm": {"backend": "local", "modle": "x"}})
        assert unknown.is_error and "unknown keys" in unknown.content[0].text
        limits = await client.call_tool("generation_init", {"generation_llm": {"backend": "local", "timeout": 0}})
        assert limits.is_error and "generation_llm.timeout must be a finite number of seconds > 0" in (
            limits.content[0].text
        )
        limits = await client.call_tool("generation_init", {"generation_llm": {"backend": "local", "max_workers": "x"}})
        assert limits.is_error and "generation_llm.max_workers must be a whole number >= 1, got 'x'" in (
            limits.content[0].text
        )


def test_init_resolves_the_local_smoke_test_model() -> None:
    info = generate.generation_init(generation_llm=defaults("generation")["generation_llm"])["generation_info"]
    assert info["model_path"].endswith(".gguf") and Path(info["model_path"]).is_file()
    assert "smoke-test" in info["note"]
