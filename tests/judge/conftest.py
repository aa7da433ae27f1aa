"""Fixtures of the judge tests: the local OpenAI-compatible stub server and LLM settings pointing at it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_stub import OpenAIStub, content_of
from ultra_kit.factory import tool_settings
from ultra_kit.settings import defaults

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "umbrela"
SECRET = "sk-test-DO-NOT-LEAK-4f9c2a7e1b"

_QUERY = re.compile(r"Query: (.*?)\n\nPassage: ", re.DOTALL)
_PASSAGE = re.compile(r"\n\nPassage: (.*?)\n\nYour single line", re.DOTALL)


def query_and_passage(request: dict[str, Any]) -> tuple[str, str]:
    """The query and passage an umbrela_v1 request asks about."""
    text = content_of(request)
    return _QUERY.search(text).group(1), _PASSAGE.search(text).group(1)


def oracle(grades: dict[tuple[str, str], int], default: int = 0):
    """A responder that answers each (query, passage) with the grade in ``grades``."""

    def respond(request: dict[str, Any]) -> str:
        return f"##final score: {grades.get(query_and_passage(request), default)}"

    return respond


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as server:
        yield server


def llm_settings(stub: OpenAIStub, **overrides: Any) -> dict[str, Any]:
    """``judge_llm`` for the stub, with the test secret as API key (the other keys: parameter.yaml's)."""
    return {"backend": "openai", "base_url": stub.base_url, "model_id": "stub-judge", "api_key": SECRET, **overrides}


def declared_reply(judge: Any) -> Callable[[dict[str, Any]], str]:
    """A responder that answers each request of ``judge`` (an ``AnswerJudge``, asked with structured output)
    with the example of the reply its prompt declares, sized to the list the request's schema asks for."""

    def respond(request: dict[str, Any]) -> str:
        wanted = request["response_format"]["json_schema"]
        lists = [p for p in wanted["schema"]["properties"].values() if p.get("type") == "array"]
        return judge.replies[wanted["name"]].example(length=lists[0].get("minItems") if lists else None)

    return respond


def call_job(job: Callable[..., Any], /, *args: Any, **given: Any) -> Any:
    """``job(*args, **given)`` with parameter.yaml's value for every setting ``given`` leaves out, as the server
    fills them; no answer cache unless the test names one (``judge_cache=""``)."""
    settings = tool_settings(job, defaults("judge"))
    if "judge_cache" in settings:
        settings["judge_cache"] = ""
    return job(*args, **{**settings, **given})
