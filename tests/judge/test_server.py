"""The judge server over MCP: schemas, settings defaults, progress, errors, secrets; one real stdio run."""

from __future__ import annotations

import inspect
import json
import logging
import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from servers.judge.server import SPEC
from tests.judge.conftest import ROOT, SAMPLE, SECRET, llm_settings
from tests.support.openai_stub import OpenAIStub
from ultra_kit.settings import load_parameter_file

pytestmark = pytest.mark.anyio

PARAMETERS = load_parameter_file(ROOT / "servers" / "judge" / "parameter.yaml")


def test_settings_have_no_default_in_python() -> None:
    for fn in SPEC.load_tools():
        for name, param in inspect.signature(fn).parameters.items():
            if name in PARAMETERS:
                assert param.default is inspect.Parameter.empty, f"{fn.__name__}.{name}"
                assert param.kind is inspect.Parameter.KEYWORD_ONLY, f"{fn.__name__}.{name}"


def test_parameter_file_holds_no_secret() -> None:
    text = (ROOT / "servers" / "judge" / "parameter.yaml").read_text()
    assert "api_key: ${OPENAI_API_KEY}" in text
    assert "sk-" not in text


async def test_tools_publish_schemas() -> None:
    async with Client(SPEC.create_app()) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert {"umbrela_judge", "judge_agreement"} <= set(listed)  # later issues add tools
    umbrela = listed["umbrela_judge"]
    assert umbrela.input_schema["properties"]["depth"]["default"] == PARAMETERS["depth"]
    assert {"llm_qrels_path", "judged_run_path", "counts", "usage", "prompt"} <= set(
        umbrela.output_schema["properties"]
    )
    assert listed["judge_agreement"].input_schema["required"] == ["llm_qrels_path"]
    for tool in listed.values():  # every setting's published default is parameter.yaml's, judge_llm whole
        for name, schema in tool.input_schema["properties"].items():
            if name in PARAMETERS:
                assert schema["default"] == PARAMETERS[name], (tool.name, name)
    assert not {"judge_timeout", "judge_max_retries", "judge_max_workers"} & set(umbrela.input_schema["properties"])


async def test_umbrela_over_mcp_reports_progress_and_keeps_the_secret(tmp_path, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    updates: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(progress)

    with OpenAIStub() as stub:
        stub.add_fault("status", status=400, message=f"bad request for key {SECRET}", match="Passage: two")
        async with Client(SPEC.create_app()) as client:
            result = await client.call_tool(
                "umbrela_judge",
                {
                    "query": "a question",
                    "passages": {"d1": "one", "d2": "two"},
                    "judge_llm": llm_settings(stub),
                    "judge_cache": str(tmp_path / "cache.sqlite"),
                    "save_path": str(tmp_path / "out"),
                    "max_failed_fraction": 0.5,
                },
                progress_callback=on_progress,
            )
    assert not result.is_error, result.content
    data = result.structured_content
    assert data["counts"] == {"pairs": 2, "ok": 1, "parse_error": 0, "error": 1}
    assert updates and updates[-1] == 2
    # The secret is nowhere: result, files written, cache, logs.
    assert SECRET not in json.dumps(data)
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert SECRET.encode() not in file.read_bytes(), file
    assert SECRET not in caplog.text
    assert "***" in json.dumps(data["failures"])  # the echoed key was redacted


async def test_missing_file_is_a_tool_error(tmp_path) -> None:
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool(
            "umbrela_judge",
            {
                "queries_path": str(tmp_path / "nope.jsonl"),
                "judge_llm": {"base_url": "http://127.0.0.1:9/v1", "model_id": "m", "api_key": ""},
            },
        )
    assert result.is_error and "nope.jsonl" in result.content[0].text


async def test_unset_api_key_variable_is_explained(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("umbrela_judge", {"query": "q", "passages": ["p"]})
    assert result.is_error and "OPENAI_API_KEY is not set" in result.content[0].text


async def test_stdio_server_end_to_end(tmp_path) -> None:
    with OpenAIStub() as stub:
        env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": SECRET}
        env["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # results go to tmp_path, outside output/
        params = StdioServerParameters(command=sys.executable, args=["-m", "servers.judge"], cwd=str(ROOT), env=env)
        async with Client(params) as client:
            result = await client.call_tool(
                "umbrela_judge",
                {
                    "queries_path": str(SAMPLE / "queries.jsonl"),
                    "run_path": str(SAMPLE / "run.title.trec"),
                    "corpus_path": str(SAMPLE / "corpus.jsonl"),
                    "depth": 2,
                    # the key itself: over MCP ${OPENAI_API_KEY} goes only to the host parameter.yaml pairs it
                    # with (tests/hostile/test_keys_hosts.py); the server still knows it as its secret
                    "judge_llm": {**llm_settings(stub), "api_key": SECRET},
                    "judge_cache": "",
                    "save_path": str(tmp_path),
                },
            )
        assert not result.is_error, result.content
        assert stub.served[0].authorization == f"Bearer {SECRET}"
    data = result.structured_content
    assert data["counts"]["ok"] == data["counts"]["pairs"] == stub.request_count
    assert Path(data["llm_qrels_path"]).read_text().count("\n") == data["counts"]["ok"]
    assert SECRET not in json.dumps(data)
    assert SECRET.encode() not in Path(data["result_path"]).read_bytes()
