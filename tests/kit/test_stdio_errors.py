"""Over stdio a tool's error always says why: a result that does not match its declared type, an error raised
without a message, a crash; a real MCP client against a real server subprocess built by the kit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.tool_errors import has_reason

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
SERVER = '''
from typing import TypedDict

from mcp.server.mcpserver.exceptions import ToolError

from ultra_base.errors import InputError
from ultra_kit.factory import build_server


class Out(TypedDict):
    a: int
    b: int


def missing_key() -> Out:
    """returns no b"""
    return {"a": 1}


def wrong_type() -> Out:
    """b is text"""
    return {"a": 1, "b": "two"}


def bare_input_error() -> Out:
    """an InputError without a message"""
    raise InputError("")


def bare_tool_error() -> Out:
    """the SDK's ToolError without a message"""
    raise ToolError("")


def bare_crash() -> Out:
    """a crash without a message"""
    raise ValueError()


TOOLS = [missing_key, wrong_type, bare_input_error, bare_tool_error, bare_crash]
build_server("faulty", TOOLS, package_dir=".").run()
'''
REASONS = {
    "missing_key": "does not match its declared result type (a bug in the tool): b: Field required",
    "wrong_type": "does not match its declared result type (a bug in the tool): b: Input should be a valid integer",
    "bare_input_error": "InputError raised without a message",
    "bare_tool_error": "ToolError raised without a message",
    "bare_crash": "unexpected error: ValueError",
}


async def test_every_error_over_stdio_says_why(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    (tmp_path / "server.py").write_text(SERVER, encoding="utf-8")
    (tmp_path / "parameter.yaml").write_text("{}\n", encoding="utf-8")
    params = StdioServerParameters(command=sys.executable, args=["server.py"], cwd=str(tmp_path),
                                   env={"PYTHONPATH": str(ROOT)})  # fmt: skip
    texts = {}
    with (tmp_path / "server.log").open("w") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            for name in REASONS:
                called = await client.call_tool(name, {})
                assert called.is_error and called.structured_content is None
                texts[name] = " ".join(getattr(part, "text", "") for part in called.content)
    for name, reason in REASONS.items():
        assert texts[name].startswith(f"Error executing tool {name}: "), texts[name]
        assert reason in texts[name] and has_reason(texts[name], name), texts[name]
    assert "ValueError" in (tmp_path / "server.log").read_text()  # the crash's traceback is logged, not sent


def test_the_reason_check_refuses_a_bare_error() -> None:
    assert not has_reason("Error executing tool x", "x")
    assert not has_reason("Error executing tool x: ", "x")
    assert has_reason("Error executing tool x: y must be a number", "x")
