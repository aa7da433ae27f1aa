"""ultra_llm.panel over HTTP: members judge at the same time, each on its own slots; sample i sends seed + i."""

from __future__ import annotations

from typing import Any

import pytest

from tests.llm.conftest import SECRET
from tests.support.openai_stub import OpenAIStub
from ultra_llm.cache import NoCache
from ultra_llm.panel import run_panel, sum_usage
from ultra_llm.settings import LLMSettings

pytestmark = pytest.mark.anyio


def panel(stub: OpenAIStub, **extra: Any) -> LLMSettings:
    members = [{"base_url": stub.base_url, "model_id": f"m{i}", "api_key": SECRET} for i in (1, 2)]
    mapping = {"jury": members, "max_retries": 0, "max_workers": 1, "timeout": 10, **extra}
    return LLMSettings.from_mapping(mapping, name="judge_llm")


async def ask_twice(client: Any) -> list[str]:
    """Two requests one after the other: the member's single slot holds one at a time."""
    replies = []
    for text in ("first", "second"):
        reply = await client.chat([{"role": "user", "content": text}], {"seed": 42}, prompt="p@1")
        replies.append(reply.text)
    return replies


async def test_members_run_at_the_same_time_each_on_its_own_slots() -> None:
    with OpenAIStub(lambda request: request["model"], latency=0.3) as stub:
        runs = await run_panel(panel(stub), NoCache(), ask_twice)
        assert stub.max_in_flight == 2  # one request of each member at a time, both members at once
    assert [(run.member, run.samples) for run in runs] == [("m1", [["m1", "m1"]]), ("m2", [["m2", "m2"]])]


async def test_sample_i_sends_seed_plus_i_and_shares_the_members_slots() -> None:
    with OpenAIStub(lambda request: str(request["seed"]), latency=0.05) as stub:
        runs = await run_panel(panel(stub, samples=3, temperature=0.5), NoCache(), ask_twice)
        sent = stub.chat_requests()
        assert stub.max_in_flight == 2  # three samples, still one request a member at a time
    assert [run.samples for run in runs] == [[["42", "42"], ["43", "43"], ["44", "44"]]] * 2
    assert {body["temperature"] for body in sent} == {0.5} and len(sent) == 12
    assert runs[0].usage["requests"] == 6 and sum_usage([r.usage for r in runs])["requests"] == 12
