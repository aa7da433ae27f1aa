"""The server factory: parameter.yaml defaults, ${VAR} expansion, error mapping, annotations."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from typing_extensions import TypedDict

from ultra_base.errors import InputError
from ultra_kit.factory import build_server, expands_own_env, tool_hints
from ultra_kit.progress import progress_from_context
from ultra_kit.settings import expand_env


class Scaled(TypedDict):
    scaled: list[int]
    token_length: int


@tool_hints(read_only=True)
def scale(values: list[int], factor: int, token: str, ctx: Context, offset: int = 0) -> Scaled:
    """Multiply values by the factor setting."""
    report = progress_from_context(ctx)
    report(1, 1, "done")
    if factor == 0:
        raise InputError("factor 0 makes every value 0", path="parameter.yaml", line=1)
    if factor < 0:
        raise RuntimeError("internal detail that must not leak")
    return {"scaled": [v * factor + offset for v in values], "token_length": len(token)}


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "parameter.yaml").write_text("factor: 3\ntoken: ${FACTORY_TEST_TOKEN}\nunused: 1\n", encoding="utf-8")
    monkeypatch.setenv("FACTORY_TEST_TOKEN", "s3cret-value")
    return build_server("test", [scale], package_dir=tmp_path)


@pytest.mark.anyio
async def test_settings_take_defaults_from_parameter_yaml(app) -> None:
    async with Client(app) as client:
        (tool,) = (await client.list_tools()).tools
        properties = tool.input_schema["properties"]
        assert properties["factor"]["default"] == 3
        assert properties["token"]["default"] == "${FACTORY_TEST_TOKEN}"  # never expanded in the schema
        assert "ctx" not in properties
        assert set(tool.input_schema["required"]) == {"values"}
        assert tool.annotations.read_only_hint is True
        assert set(tool.output_schema["properties"]) == {"scaled", "token_length"}
        result = await client.call_tool("scale", {"values": [1, 2]})
        assert result.structured_content == {"scaled": [3, 6], "token_length": len("s3cret-value")}
        result = await client.call_tool("scale", {"values": [1, 2], "factor": 5, "offset": 1})
        assert result.structured_content["scaled"] == [6, 11]


@pytest.mark.anyio
async def test_input_error_reaches_caller_as_tool_error(app) -> None:
    async with Client(app) as client:
        result = await client.call_tool("scale", {"values": [1], "factor": 0})
        assert result.is_error
        assert "parameter.yaml:1: factor 0 makes every value 0" in result.content[0].text


@pytest.mark.anyio
async def test_crash_names_its_type_message_and_log(app) -> None:
    async with Client(app) as client:
        result = await client.call_tool("scale", {"values": [1], "factor": -1})
        assert result.is_error
        assert result.content[0].text == (
            "Error executing tool scale: unexpected error: RuntimeError: internal detail that must not leak "
            "(traceback in the server's stderr)"
        )


@pytest.mark.anyio
async def test_unset_environment_variable_is_named(app, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACTORY_TEST_TOKEN")
    async with Client(app) as client:
        result = await client.call_tool("scale", {"values": [1]})
        assert result.is_error
        assert "environment variable FACTORY_TEST_TOKEN is not set" in result.content[0].text


@pytest.mark.anyio
async def test_progress_reaches_the_caller(app) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(app) as client:
        await client.call_tool("scale", {"values": [1]}, progress_callback=on_progress)
    assert seen == [(1, 1, "done")]


def test_the_pure_function_is_left_untouched(app) -> None:
    assert scale([2], 2, "t", None) == {"scaled": [4], "token_length": 1}


class Token(TypedDict):
    token: str


@expands_own_env("token")
def maybe_token(use: bool, token: str) -> Token:
    """Expand the token setting only when asked to use it."""
    return {"token": expand_env(token) if use else token}


@pytest.mark.anyio
async def test_a_setting_the_tool_expands_itself_needs_no_variable_until_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "parameter.yaml").write_text("token: ${FACTORY_TEST_TOKEN}\n", encoding="utf-8")
    monkeypatch.delenv("FACTORY_TEST_TOKEN", raising=False)
    async with Client(build_server("test", [maybe_token], package_dir=tmp_path)) as client:
        result = await client.call_tool("maybe_token", {"use": False})
        assert result.structured_content == {"token": "${FACTORY_TEST_TOKEN}"}  # passed on unexpanded
        result = await client.call_tool("maybe_token", {"use": True})
        assert result.is_error and "environment variable FACTORY_TEST_TOKEN is not set" in result.content[0].text
        monkeypatch.setenv("FACTORY_TEST_TOKEN", "s3cret-value")
        result = await client.call_tool("maybe_token", {"use": True})
        assert result.structured_content == {"token": "***"}  # expanded by the tool, still redacted


def test_tool_annotations_state_destructive_and_read_only_tools_are_never_destructive():
    """MCP assumes a tool is destructive unless told; every tool here states it."""

    @tool_hints(read_only=False, idempotent=False)
    def writes_new_files() -> dict:
        return {}

    @tool_hints(read_only=False, destructive=True)
    def overwrites() -> dict:
        return {}

    @tool_hints(read_only=True, destructive=True)
    def reads() -> dict:
        return {}

    assert writes_new_files.__tool_hints__["destructive"] is False
    assert overwrites.__tool_hints__["destructive"] is True
    assert reads.__tool_hints__["destructive"] is False
