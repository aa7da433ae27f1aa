"""What a judge sends is decided by its parameters: the call's ``Prompts`` (language and prompt overrides) are
passed to ``ask``, never read from module state. Checked on the requests a real local stub server receives."""

from __future__ import annotations

import ast
import asyncio
import json
from pathlib import Path

import pytest

from servers.judge.answers.judges.basic import IDK
from servers.judge.common.asking import ask
from servers.judge.common.prompting import Prompts, load_prompt
from tests.llm.conftest import stub_settings
from tests.support.openai_stub import OpenAIStub
from ultra_base.errors import InputError
from ultra_llm.client import LLMClient
from ultra_llm.prompt_files import parse_prompt

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
OWN_IDK = """=== system ===
You sort replies.
=== user ===
Q: {question}
A: {answer}
Reply {"attempted": "yes" or "no", "idk": "yes", "partial" or "no"}.
"""
REPLY = json.dumps({"attempted": "yes", "idk": "no"})


def messages_of(request: dict) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in request["messages"]]


async def test_two_calls_at_once_send_each_its_own_prompts() -> None:
    """German with the user's own prompt and the built-in English prompt, asked concurrently on one client:
    each request carries its own call's prompt and language line, whatever ran beside it."""
    own = parse_prompt("idk_v1", OWN_IDK, "own_idk.txt")
    german = Prompts("de", {"idk_v1": own})
    values = {"question": "Wo liegt Paris?", "answer": "In Frankreich."}
    with OpenAIStub(responder=lambda request: REPLY) as stub:
        async with LLMClient(stub_settings(stub), None) as client:
            answers = await asyncio.gather(
                ask(client, german, "idk_v1", IDK, max_retries=0, **values),
                ask(client, Prompts.as_written(), "idk_v1", IDK, max_retries=0, **values),
            )
        requests = stub.chat_requests()
    assert [a.status for a in answers] == ["ok", "ok"]
    assert [a.value for a in answers] == [{"attempted": "yes", "idk": "no"}] * 2
    sent = sorted((messages_of(r) for r in requests), key=len)
    own_request = next(m for m in sent if m[0][1].startswith("You sort replies."))
    builtin_request = next(m for m in sent if m is not own_request)
    assert own_request[0][1].startswith("You sort replies.\n\nLanguage: the question and the answer are in German.")
    assert own_request[1] == ("user", own.render(**values)[1]["content"])
    assert builtin_request == [(m["role"], m["content"]) for m in load_prompt("idk_v1").render(**values)]
    assert "German" not in json.dumps(builtin_request)


def test_a_prompts_language_is_checked() -> None:
    assert Prompts("auto", {}).language == "auto" and Prompts.as_written().language == "en"
    with pytest.raises(InputError, match="language"):
        Prompts("xx-not-a-language", {})


def test_the_judge_server_keeps_no_context_variables() -> None:
    """No module of the judge server holds a ContextVar: a judge's language and prompts are its parameters."""
    found = []
    for path in sorted((ROOT / "servers" / "judge").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
            if name == "ContextVar":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found
