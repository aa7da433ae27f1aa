"""A tool's settings typed int, float, bool (or Optional of one) written as one ``${VAR}`` in its own
``parameter.yaml`` or by an MCP caller: read as that type by the MCP server itself; a str setting keeps the text;
a text of another kind is refused naming the setting and the reference, never the value."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from typing_extensions import TypedDict

from ultra_base import redact
from ultra_kit.factory import build_server

DEFAULTS = "limit: ${TS_LIMIT}\nscale: ${TS_SCALE}\nflag: ${TS_FLAG}\ndepth: ${TS_DEPTH}\ncode: ${TS_CODE}\n"
GOOD = {"TS_LIMIT": "5", "TS_SCALE": "0.7", "TS_FLAG": " TRUE ", "TS_DEPTH": " 12 ", "TS_CODE": "0042"}


class Seen(TypedDict):
    values: list[str]


def typed(limit: int, scale: float, flag: bool, depth: int | None, code: str) -> Seen:
    """Each setting's value and type, as the tool receives it."""
    return {"values": [repr(value) for value in (limit, scale, flag, depth, code)]}


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "parameter.yaml").write_text(DEFAULTS, encoding="utf-8")
    for name, value in GOOD.items():
        monkeypatch.setenv(name, value)
    return build_server("typed", [typed], package_dir=tmp_path)


@pytest.mark.anyio
async def test_defaults_and_arguments_written_as_a_variable_are_read_as_their_types(app, monkeypatch) -> None:
    async with Client(app) as client:
        result = await client.call_tool("typed", {})
        assert result.structured_content == {"values": ["5", "0.7", "True", "12", "'0042'"]}
        monkeypatch.setenv("TS_OTHER", "7")
        given = {"limit": "${TS_OTHER}", "scale": "${TS_OTHER}", "flag": "${TS_NO}", "code": "${TS_OTHER}"}
        monkeypatch.setenv("TS_NO", "false")
        result = await client.call_tool("typed", given)
        assert result.structured_content == {"values": ["7", "7.0", "False", "12", "'7'"]}
    assert redact.redact_text("flag: false") == "flag: false"  # a boolean read is no secret


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("setting", "text", "kind"),
    [("limit", "5.5", "a whole number"), ("limit", "5.0", "a whole number"), ("flag", "yes", "true or false"),
     ("scale", "nan", "a number"), ("depth", "null", "a whole number")],
)  # fmt: skip
async def test_a_text_of_another_kind_is_refused_by_reference(app, monkeypatch, setting, text, kind) -> None:
    monkeypatch.setenv("TS_BAD", text)
    said = f"{setting} ${{TS_BAD}} must hold {kind}; it holds something else (not shown)"
    async with Client(app) as client:
        given = await client.call_tool("typed", {setting: "${TS_BAD}"})
        assert given.is_error and said in given.content[0].text and text not in given.content[0].text
        monkeypatch.setenv(f"TS_{setting.upper()}", text)  # the parameter.yaml default
        default = await client.call_tool("typed", {})
        message = default.content[0].text
        assert default.is_error and f"parameter.yaml: {setting} ${{TS_{setting.upper()}}} must hold {kind}" in message
        assert text not in message
    assert redact.redact_text(f"x {text} y") == f"x {text} y"  # a refused text is not remembered (null: every null)
