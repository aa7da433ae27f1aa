"""The ask-read-repair loop against the local stub server: readable, repaired, unreadable, failed, cached."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.llm.conftest import stub_settings
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_llm.asking import ask_until_readable
from ultra_llm.cache import AnswerCache
from ultra_llm.client import LLMClient
from ultra_llm.replies import Reply, Unreadable, last_json

pytestmark = pytest.mark.anyio
QUESTION = [{"role": "user", "content": "Grade the passage from 0 to 3 as JSON."}]
REPAIR = "Reply with one JSON object only."


def grade(text: str) -> int:
    """The ``score`` of the reply's JSON object, 0 to 3; ``Unreadable`` otherwise."""
    score = last_json(text, dict, spans="counted").get("score")
    if score not in (0, 1, 2, 3):
        raise Unreadable(f"expected a score from 0 to 3, got {score!r}")
    return score


def graded(request: dict[str, Any]) -> str:
    return '{"score": 2}' if "Grade" in content_of(request) else "?"


async def ask(client: LLMClient, *, retries: int = 2, reasoning_when_blank: bool = True, read=grade) -> Any:
    return await ask_until_readable(
        client, QUESTION, {"temperature": 0.0}, version="grade_v1@0123456789ab",
        reply=Reply(read_with=read, repair_with=REPAIR), retries=retries, reasoning_when_blank=reasoning_when_blank,
    )  # fmt: skip


async def test_a_readable_reply_is_read_once() -> None:
    with OpenAIStub(graded) as stub:
        async with LLMClient(stub_settings(stub)) as client:
            answer = await ask(client)
    assert (answer.status, answer.value, answer.requests, answer.cached) == ("ok", 2, 1, False)
    assert answer.error is None and answer.raw is None


async def test_an_unreadable_reply_is_repaired_with_the_reason() -> None:
    with OpenAIStub(graded) as stub:
        stub.add_fault("reply", text='I would give it {"score": 5}', times=1)
        async with LLMClient(stub_settings(stub)) as client:
            answer = await ask(client)
        second = stub.chat_requests()[1]["messages"]
    assert (answer.status, answer.value, answer.requests) == ("ok", 2, 2)
    assert second[1:] == [
        {"role": "assistant", "content": 'I would give it {"score": 5}'},
        {"role": "user", "content": f"Your reply could not be used: expected a score from 0 to 3, got 5. {REPAIR}"},
    ]


async def test_a_reply_unreadable_after_the_repairs_is_a_parse_error_never_a_value() -> None:
    with OpenAIStub(lambda request: "The score is high.") as stub:
        async with LLMClient(stub_settings(stub)) as client:
            answer = await ask(client, retries=1)
        assert stub.request_count == 2
    assert (answer.status, answer.value, answer.requests) == ("parse_error", None, 2)
    assert answer.raw == "The score is high."
    assert answer.error == "unreadable after 2 replies: no JSON dict in the reply"


async def test_a_request_without_a_reply_is_an_error() -> None:
    with OpenAIStub(graded) as stub:
        stub.add_fault("status", status=400, message="prompt too long")
        async with LLMClient(stub_settings(stub)) as client:
            answer = await ask(client)
    assert (answer.status, answer.value) == ("error", None)
    assert "400" in answer.error and "prompt too long" in answer.error


async def test_a_reader_error_that_is_not_unreadable_is_not_swallowed() -> None:
    with OpenAIStub(lambda request: "12") as stub:
        async with LLMClient(stub_settings(stub)) as client:
            with pytest.raises(ZeroDivisionError):
                await ask(client, read=lambda text: int(text) / 0)


@pytest.mark.parametrize(("reasoning_when_blank", "status", "value"), [(True, "ok", 3), (False, "parse_error", None)])
async def test_a_blank_reply_is_read_from_the_reasoning_only_when_asked(
    reasoning_when_blank: bool, status: str, value: int | None
) -> None:
    with OpenAIStub(graded) as stub:
        stub.add_fault("reply", text="  ", reasoning='Thinking... {"score": 3}')
        async with LLMClient(stub_settings(stub)) as client:
            answer = await ask(client, retries=0, reasoning_when_blank=reasoning_when_blank)
    assert (answer.status, answer.value) == (status, value)


async def test_answers_from_the_cache_are_marked_cached(tmp_path: Path) -> None:
    with OpenAIStub(graded) as stub:
        stub.add_fault("status", status=500, times=1)  # a failure is never stored: the retry's answer is
        for run in range(2):
            cache = AnswerCache(tmp_path / "answers.sqlite")
            async with LLMClient(stub_settings(stub), cache) as client:
                answer = await ask(client)
            cache.close()
            assert (answer.status, answer.value, answer.cached) == ("ok", 2, run == 1)
        assert stub.request_count == 2  # the answer is replayed from the cache, nothing sent again
    # an unreadable reply from the cache is asked for again: tests/llm/test_no_sticky_failures.py
