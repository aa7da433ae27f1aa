"""target.ask over MCP stdio, as an agent host calls it: the target's address, headers and code come from a
parameter file only; an agent's call that changes them is refused before anything is sent or imported."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import ROOT

READ = {"answer": "answer", "contexts": "contexts"}


async def call(tmp_path: Path, arguments: dict[str, Any], run_file: Path | None = None):
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "HOME": str(tmp_path),
           "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1", "ULTRA_READ_ROOTS": str(tmp_path)}  # fmt: skip
    if run_file is not None:
        env |= {"ULTRA_RUN_PARAMETERS": str(run_file), "ULTRA_SERVER_ALIAS": "target"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "servers.target"], cwd=str(ROOT), env=env)
    with (tmp_path / "stderr.log").open("w") as err:
        async with Client(stdio_client(params, errlog=err)) as client:
            return await client.call_tool("ask", {"q_ls": ["q1", "q2"], "save_path": str(tmp_path / "t"), **arguments})


def text_of(result: Any) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


def run_file(tmp_path: Path, target: dict[str, Any]) -> Path:
    path = tmp_path / "run_parameter.yaml"
    path.write_text(yaml.safe_dump({"target": {"target": target}}))
    return path


@pytest.mark.anyio
@pytest.mark.parametrize(
    "change",
    [
        {"url": "http://127.0.0.1:9/steal"},
        {"kind": "python", "function": "os:system"},
        {"kind": "python", "function": "examples/targets/rag.py:answer"},
        {"headers": {"Authorization": "Bearer ${HOME}"}},
        {"kind": "mcp", "command": ["sh", "-c", "touch /tmp/pwned"], "tool": "x"},
        {"env": {"PYTHONPATH": "/tmp/evil", "LD_PRELOAD": "/tmp/evil.so"}},  # the mcp server's environment
        {"max_response_bytes": 10**12, "max_json_depth": 100_000},  # limits an agent may not raise
        {"max_workers": 10_000, "rate_limit": 1000},
    ],
)
async def test_an_agent_cannot_point_the_target_elsewhere_or_import_code(tmp_path, service, change):
    configured = {"kind": "http", "url": f"{service.url}/ask", **READ}
    result = await call(tmp_path, {"target": {**configured, **change}}, run_file(tmp_path, configured))
    assert result.is_error
    message = text_of(result)
    assert "refused" in message and "may be set only in a parameter file" in message
    assert all(f"target.{key}" in message for key in change if key != "kind" or change[key] != "http")
    assert service.seen == []  # nothing was sent anywhere, nothing imported


@pytest.mark.anyio
async def test_the_run_files_target_is_asked_over_stdio(tmp_path, service):
    configured = {"kind": "http", "url": f"{service.url}/ask", "headers": {"X-Key": "k1"}, **READ}
    result = await call(tmp_path, {"target": configured, "id_ls": ["a", "b"]}, run_file(tmp_path, configured))
    assert not result.is_error, text_of(result)
    assert result.structured_content["pred_ls"] == ["A:q1", "A:q2"]
    assert {s["headers"]["X-Key"] for s in service.seen} == {"k1"}


@pytest.mark.anyio
async def test_without_a_run_file_only_parameter_yaml_counts(tmp_path, service):
    result = await call(tmp_path, {"target": {"kind": "http", "url": f"{service.url}/ask", **READ}})
    assert result.is_error and "target.url may be set only in a parameter file" in text_of(result)
    assert service.seen == []
