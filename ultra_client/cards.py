"""Generated parts of the docs: each tool's inputs, settings (with their parameter.yaml defaults) and
outputs, and the registry tables of measures, metrics and judges.

A doc marks a generated part with a pair of lines::

    <!-- generated: tool evaluation.evaluate_trec -->
    <!-- end generated -->

``python -m ultra_client.cards`` fills every such part in ``docs/`` and the README, and gives a tool
that has no card yet a skeleton section at the end of ``docs/tools/<server>.md`` (the file is created
if needed) for its author to finish; ``python -m ultra_client.cards --check`` (and
``tests/client/test_cards.py``) fails when a part is stale or a tool has no card, so a card cannot
drift from the code.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import typing
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- generated: (?P<key>[^>]*?) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.DOTALL)
LIBRARY_TABLES = {"measures": "ultra_trec.measures:registry_markdown"}


def doc_files() -> list[Path]:
    """The README and every Markdown file under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def render(text: str) -> str:
    """``text`` with every generated part filled in anew."""

    def fill(match: re.Match[str]) -> str:
        return f"{match.group(1)}{generate(match.group('key').strip())}\n{match.group(4)}"

    return BLOCK.sub(fill, text)


def generate(key: str) -> str:
    """The Markdown of one generated part: ``tool <server>.<tool>`` or ``registry <name>``."""
    kind, _, name = key.partition(" ")
    if kind == "tool":
        server, _, tool = name.partition(".")
        return tool_card(server, tool)
    if kind == "registry" and name in LIBRARY_TABLES:
        from ultra_kit.factory import named_function

        return named_function(LIBRARY_TABLES[name])().rstrip("\n")
    tables = server_tables()
    if kind == "registry" and name in tables:
        return tables[name].doc_table(name).rstrip("\n")
    known = sorted([*LIBRARY_TABLES, *tables])
    raise ValueError(f"unknown generated part {key!r}: use 'tool <server>.<tool>' or 'registry {known}'")


@cache
def server_tables() -> dict[str, Any]:
    """Each registry table a built-in server's SPEC declares (``doc_tables``), with that SPEC."""
    from ultra_kit.inprocess import load_spec

    tables: dict[str, Any] = {}
    for folder in sorted((ROOT / "servers").glob("*/server.py")):
        spec = load_spec(f"servers.{folder.parent.name}", ROOT)
        tables.update(dict.fromkeys(spec.doc_tables, spec) if spec is not None else {})
    return tables


@cache
def server_tools(server: str) -> dict[str, Any]:
    """The tools of a built-in server, wrapped as ``ultra call`` wraps them."""
    from ultra_kit.inprocess import load_spec, local_tools

    spec = load_spec(f"servers.{server}", ROOT)
    if spec is None:
        raise ValueError(f"servers.{server} has no SPEC (or cannot be imported)")
    return local_tools(spec)


def tool_card(server: str, tool: str) -> str:
    """The inputs table (variables, then settings with defaults) and the outputs table of one tool."""
    tools = server_tools(server)
    if tool not in tools:
        raise ValueError(f"{server} has no tool {tool!r}; it has {sorted(tools)}")
    info = tools[tool]
    schema = _input_schema(info)
    rows = ["| input | kind | type | default | description |", "|---|---|---|---|---|"]
    variables = [n for n in info.parameters if n not in info.settings]
    for name in variables + list(info.settings):
        prop = schema.get(name, {})
        if name in info.settings:
            kind, default = "setting", f"`{json.dumps(info.settings[name], ensure_ascii=False)}`"
        else:
            kind, default = ("variable" if name in info.required else "variable, optional"), ""
        rows.append(f"| `{name}` | {kind} | {_type(prop)} | {default} | {_cell(prop.get('description', ''))} |")
    outputs = ["| output | type | description |", "|---|---|---|"]
    for name, prop in _output_schema(info).items():
        outputs.append(f"| `{name}` | {_type(prop)} | {_cell(prop.get('description', ''))} |")
    call = f"ultra call {server}.{tool}"
    return "\n".join([f"`{call}` · {_cell(info.description.splitlines()[0])}", "", *rows, "", *outputs])


def _input_schema(info: Any) -> dict[str, Any]:
    from ultra_kit.inprocess import input_schema

    return input_schema(info).get("properties", {})


def _output_schema(info: Any) -> dict[str, Any]:
    """The output fields with their JSON schema (a referenced definition's description comes along)."""
    import inspect

    import pydantic

    annotation = inspect.signature(info.function).return_annotation
    try:
        schema = pydantic.TypeAdapter(annotation).json_schema(mode="serialization")
    except pydantic.PydanticUserError:  # e.g. a typing.TypedDict on Python < 3.12: names and types only
        return {name: {"type": _hint_name(hint)} for name, hint in typing.get_type_hints(annotation).items()}
    definitions = schema.get("$defs", {})
    fields = {}
    for name, prop in schema.get("properties", {}).items():
        ref = prop.get("$ref", "").rsplit("/", 1)[-1]
        fields[name] = {**definitions.get(ref, {}), **prop} if ref else prop
    return fields


def _hint_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def _type(prop: dict[str, Any]) -> str:
    """A short type name from a JSON schema fragment."""
    if "anyOf" in prop:
        return " \\| ".join(dict.fromkeys(_type(p) for p in prop["anyOf"]))
    kind = prop.get("type")
    if kind == "array":
        return f"list[{_type(prop.get('items', {}))}]" if prop.get("items") else "list"
    if kind == "object":
        return "mapping"
    if kind is None:
        return "object" if "$ref" in prop else "any"
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "null"}.get(kind, kind)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def card_path(server: str) -> Path:
    """The doc holding the cards of ``server``'s tools."""
    return ROOT / "docs" / "tools" / f"{server}.md"


def missing_cards(server: str) -> list[str]:
    """The tools of ``server`` without a generated card in its doc, in the server's order."""
    path = card_path(server)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return [tool for tool in server_tools(server) if f"<!-- generated: tool {server}.{tool} -->" not in text]


def with_skeletons(server: str, text: str, tools: list[str]) -> str:
    """``text`` (the server's doc, or '' for a new one) with a skeleton section per tool of ``tools``."""
    parts = [text.rstrip("\n")] if text.strip() else [f"# {server.capitalize()} server"]
    for tool in tools:
        parts.append(
            f"## {tool}\n\nTODO: what {tool} is for, when to use it, and an example.\n\n"
            f"<!-- generated: tool {server}.{tool} -->\n<!-- end generated -->"
        )
    return "\n\n".join(parts) + "\n"


def add_skeletons(check: bool) -> list[str]:
    """Give each tool without a card a skeleton section (unless ``check``); the docs that lack one."""
    from ultra_client.calls.locate import builtin_servers

    lacking = []
    for server in builtin_servers():
        tools = missing_cards(server)
        if not tools:
            continue
        path = card_path(server)
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        lacking.append(f"{shown} (no card for {', '.join(tools)})")
        if not check:
            text = path.read_text(encoding="utf-8") if path.is_file() else ""
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(with_skeletons(server, text, tools), encoding="utf-8")
    return lacking


def main(argv: list[str] | None = None) -> int:
    """Fill the generated parts of the docs, or with --check report the stale ones (exit 1)."""
    parser = argparse.ArgumentParser(prog="python -m ultra_client.cards", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a part is stale")
    args = parser.parse_args(argv)
    stale = add_skeletons(args.check)
    for path in doc_files():
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            stale.append(str(path.relative_to(ROOT)))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "stale" if args.check else "updated"
    print(f"{verb}: {', '.join(stale)}" if stale else "every generated part is current")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
