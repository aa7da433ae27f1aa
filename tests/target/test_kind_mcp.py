"""The mcp kind against a real MCP server over stdio (tests/target/rag_mcp_server.py)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path

import pytest

from servers.target.kinds import mcp as kind
from servers.target.kinds.base import KindContext, TargetCallError, TurnRequest
from ultra_base.errors import InputError

SERVER = str(Path(__file__).with_name("rag_mcp_server.py"))
CONTEXT = KindContext(read_roots=(Path.cwd(),), timeout=20.0, max_response_bytes=1 << 20, max_json_depth=32)
STRUCTURED = {
    "kind": "mcp",
    "command": [sys.executable, SERVER],
    "tool": "answer",
    "arguments": {"question": "{{ question }}", "top_k": "{{ settings.top_k }}", "history": "{{ history | tojson }}"},
    "answer": "reply",
    "contexts": "hits",
    "context_text": "content",
    "context_id": "doc",
    "context_score": "relevance",
    "citations": "",
}


@pytest.mark.anyio
async def test_the_tool_result_gives_answer_and_passages() -> None:
    asker = kind.open_asker(STRUCTURED, CONTEXT)
    history = ({"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"})
    try:
        reply = await asker.ask(TurnRequest("capital of Germany?", "q1", history=history, settings={"top_k": 2}))
    finally:
        await asker.aclose()
    assert reply.answer == "From d2: Berlin is the capital of Germany."
    assert [(p.id, p.text, p.score) for p in reply.contexts] == [
        ("d2", "Berlin is the capital of Germany.", 3.0),
        ("d1", "Paris is the capital of France.", 2.0),
    ]
    assert asker._owner is None and asker._client is None  # closed: the server is gone


@pytest.mark.anyio
async def test_concurrent_calls_share_one_server_process() -> None:
    asker = kind.open_asker(dict(STRUCTURED, answer="to_string(asked.pid)"), CONTEXT)
    try:
        replies = await asyncio.gather(
            *(asker.ask(TurnRequest(f"q {i}", f"q{i}", settings={"top_k": 1})) for i in range(8))
        )
    finally:
        await asker.aclose()
    assert len({reply.answer for reply in replies}) == 1


@pytest.mark.anyio
async def test_the_arguments_the_server_received_are_the_rendered_templates() -> None:
    target = dict(STRUCTURED, answer="to_string(asked)")  # the answer is what the tool saw, as JSON text
    asker = kind.open_asker(target, CONTEXT)
    history = ({"role": "user", "content": 'say "hi"'},)
    try:
        reply = await asker.ask(TurnRequest('and "then"?', "q9", history=history, settings={"top_k": 3}))
    finally:
        await asker.aclose()
    asked = json.loads(reply.answer)
    assert asked["question"] == 'and "then"?' and asked["top_k"] == 3
    assert json.loads(asked["history"]) == [{"role": "user", "content": 'say "hi"'}]


@pytest.mark.anyio
async def test_a_tool_returning_text_is_read_from_its_structured_result() -> None:
    # the SDK sends a str return as text and as structured {"result": ...}
    target = dict(STRUCTURED, tool="plain", arguments={"question": "{{ question }}"}, answer="result", contexts="")
    asker = kind.open_asker(target, CONTEXT)
    try:
        reply = await asker.ask(TurnRequest("why?", "q1"))
    finally:
        await asker.aclose()
    assert reply.answer == "plainly: why?" and reply.contexts == ()


@pytest.mark.anyio
async def test_a_tool_error_is_a_target_error_and_a_crash_a_retryable_connection_error_then_a_fresh_server() -> None:
    asker = kind.open_asker(dict(STRUCTURED, tool="refuse", arguments={"question": "{{ question }}"}), CONTEXT)
    try:
        with pytest.raises(TargetCallError) as refused:
            await asker.ask(TurnRequest("q?", "q1"))
    finally:
        await asker.aclose()
    assert refused.value.reason == "target_error" and "no index for 'q?'" in refused.value.detail
    assert not refused.value.retryable

    crashing = kind.open_asker(dict(STRUCTURED, tool="crash", arguments={"question": "{{ question }}"}), CONTEXT)
    try:
        with pytest.raises(TargetCallError) as dropped:
            await crashing.ask(TurnRequest("q?", "q1"))
        assert dropped.value.reason == "connection" and dropped.value.retryable
        with pytest.raises(TargetCallError) as again:  # started anew, and it dies again
            await crashing.ask(TurnRequest("q?", "q2"))
        assert again.value.reason == "connection"
    finally:
        await crashing.aclose()


@pytest.mark.anyio
async def test_a_missing_tool_or_a_command_that_is_no_server_is_an_input_error_with_the_reason() -> None:
    asker = kind.open_asker(dict(STRUCTURED, tool="nope"), CONTEXT)
    tools = r"\['answer', 'plain', 'refuse', 'crash', 'environment'\]"
    with pytest.raises(InputError, match=r"no tool 'nope'; its tools: " + tools):
        await asker.ask(TurnRequest("q?", "q1"))
    await asker.aclose()
    broken = kind.open_asker(
        dict(STRUCTURED, command=[sys.executable, "-c", "import sys; sys.exit('no index here')"]), CONTEXT
    )
    with pytest.raises(InputError, match="did not give a usable MCP server: .*its stderr ends: no index here"):
        await broken.ask(TurnRequest("q?", "q1"))
    await broken.aclose()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"command": "python server.py"}, "target.command must be a list of words"),
        ({"tool": ""}, "target.tool must name the tool"),
        ({"arguments": ["x"]}, "target.arguments must be a mapping"),
        ({"answer": "reply[["}, "target.answer is not a JMESPath expression"),
        ({"env": ["RAG_INDEX=x"]}, "target.env must be a mapping of variable names to values, got a list"),
        ({"env": {"RAG INDEX": "x"}}, "target.env: 'RAG INDEX' is not an environment variable name"),
        ({"env": {"RAG_TOKEN": ["s3cr3t-value"]}}, r"^target.env.RAG_TOKEN must be text or a number, got a list$"),
    ],
)
def test_bad_settings_are_input_errors_before_anything_starts(change: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        kind.open_asker(dict(STRUCTURED, **change), CONTEXT)


def test_target_ask_over_an_mcp_tool(tmp_path: Path) -> None:
    from tests.target.conftest import ask, records

    target = {key: value for key, value in STRUCTURED.items() if key != "citations"}
    target["settings"] = {"top_k": 2}
    result = ask(tmp_path, ["capital of Germany?", "capital of Italy?"], target, id_ls=["q1", "q2"])
    assert result["pred_ls"] == ["From d2: Berlin is the capital of Germany.", "From d3: Rome is the capital of Italy."]
    assert result["ret_ids"] == [["d2", "d1"], ["d3", "d1"]]
    assert Path(result["run_path"]).read_text().splitlines() == [
        "q1 Q0 d2 1 2 target", "q1 Q0 d1 2 1 target", "q2 Q0 d3 1 2 target", "q2 Q0 d1 2 1 target",
    ]  # fmt: skip
    assert [r["contexts"][0]["score"] for r in records(result)] == [3.0, 3.0]


ENVIRONMENT = dict(STRUCTURED, tool="environment", arguments={"question": "{{ question }}"}, answer="reply",
                   contexts="")  # fmt: skip
SECRET = "tok-0d5f-secret-value"


@pytest.mark.anyio
async def test_env_reaches_the_server_beside_the_safe_environment_only(monkeypatch) -> None:
    monkeypatch.setenv("NOT_FOR_THE_SERVER", "x")
    asker = kind.open_asker(dict(ENVIRONMENT, env={"RAG_INDEX": "idx-7", "RAG_TOKEN": SECRET, "TOP_K": 3}), CONTEXT)
    assert asker.env == {"RAG_INDEX": "idx-7", "RAG_TOKEN": SECRET, "TOP_K": "3"}
    try:
        reply = await asker.ask(TurnRequest("q?", "q1"))
        seen = await asker._client.call_tool("environment", {"question": "q?"})
    finally:
        await asker.aclose()
    assert reply.answer == "idx-7"
    seen = seen.structured_content
    assert seen["token_sha256"] == hashlib.sha256(SECRET.encode()).hexdigest()
    assert {"RAG_INDEX", "RAG_TOKEN", "TOP_K"} <= set(seen["names"]) and "NOT_FOR_THE_SERVER" not in seen["names"]


def test_env_values_from_variables_are_never_written_or_shown(tmp_path: Path, monkeypatch, caplog) -> None:
    """``${RAG_TOKEN}`` expanded for the server: not in the result, its files, the journal's name, the reply cache,
    the logs, nor the message of a server that prints its environment and dies."""
    from tests.target.conftest import ask
    from ultra_kit.inprocess import ToolFailure

    monkeypatch.setenv("RAG_TOKEN", SECRET)
    monkeypatch.chdir(tmp_path)
    target = dict(ENVIRONMENT, env={"RAG_INDEX": "idx-7", "RAG_TOKEN": "${RAG_TOKEN}"},
                  target_cache="output/replies.sqlite")  # fmt: skip
    result = ask(tmp_path, ["q?", "r?"], target, id_ls=["q1", "q2"])
    assert result["pred_ls"] == ["idx-7", "idx-7"]
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "replies.sqlite" for p in written) and any(p.suffix == ".jsonl" for p in written)
    for path in written:
        assert SECRET.encode() not in path.read_bytes() and SECRET not in str(path), path
    assert SECRET not in json.dumps(result) and SECRET not in caplog.text
    again = ask(tmp_path, ["q?", "r?"], target, id_ls=["q1", "q2"])  # the cache still finds its replies
    assert again["target_info"]["cached"] == 2
    printing = dict(target, command=[sys.executable, "-c", "import os, sys; sys.exit(os.environ['RAG_TOKEN'])"],
                    target_cache="")  # fmt: skip
    with pytest.raises(ToolFailure) as failure:
        ask(tmp_path / "dies", ["q?"], printing)
    assert "its stderr ends: ***" in str(failure.value) and SECRET not in str(failure.value)
