"""``ultra tools [server]``: every tool of the built-in servers (or of one), with its settings, variables
and outputs; ``--json`` prints them as JSON."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ultra_client.calls.server_info import ToolInfo


def add_parser(commands: Any) -> argparse.ArgumentParser:
    tools = commands.add_parser("tools", help="list tools with their variables, settings and outputs")
    tools.add_argument("server", nargs="?")
    tools.add_argument("--json", action="store_true", help="print JSON")
    tools.add_argument("--full", action="store_true", help="long values whole (else lines fit 100 columns)")
    return tools


def run(args: argparse.Namespace) -> int:
    import anyio

    table = anyio.run(list_tools, args.server)
    if args.json:
        payload = {
            a: {
                n: vars(i) | {"required": sorted(i.required), "required_outputs": sorted(i.required_outputs)}
                for n, i in t.items()
            }
            for a, t in table.items()
        }
        print(json.dumps(payload, indent=2, default=str))
    else:
        print(describe_tools(table, full=args.full))
    return 0


async def list_tools(server: str | None) -> dict[str, dict[str, ToolInfo]]:
    """``ultra tools [server]``: every tool of the built-in servers (or of one)."""
    from ultra_client.calls.locate import builtin_servers, locate_named_server, scratch_logs, tool_table
    from ultra_client.calls.server_pool import ServerPool, locate_server

    if server is not None:
        locations = [dataclasses.replace(locate_named_server(server), stdio=True)]
    else:
        locations = [locate_server(name, path, [Path.cwd()], stdio=True) for name, path in builtin_servers().items()]
    async with scratch_logs("tools") as logs, ServerPool(locations, logs) as pool:
        return tool_table(pool)


def describe_tools(table: dict[str, dict[str, ToolInfo]], *, full: bool = False) -> str:
    """Human-readable listing: per tool, its settings with defaults, variables and outputs; lines fit
    ``WIDTH`` columns (a mapping setting shows a key per line, a long value is cut) unless ``full``."""
    lines: list[str] = []
    for alias, tools in table.items():
        lines.append(f"{alias}")
        for info in tools.values():
            summary = info.description.splitlines()[0] if info.description else ""
            lines += _wrapped(f"  {alias}.{info.name}: {summary}", "      ", full)
            variables = [v + ("" if v in info.required else "?") for v in info.variables]
            lines += _wrapped(f"    variables: {', '.join(variables) or '-'}", "      ", full)
            for name, default in info.settings.items():
                if isinstance(default, dict) and default and not full:
                    lines.append(f"    setting {name}:")
                    lines += [_cut(f"      {key} = {_shown(value)}") for key, value in default.items()]
                else:
                    lines.append(_cut(f"    setting {name} = {_shown(default)}", full))
            lines += _wrapped(f"    outputs: {', '.join(info.outputs) or '-'}", "      ", full)
    return "\n".join(lines)


WIDTH = 100


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cut(line: str, full: bool = False) -> str:
    """``line``, or its first ``WIDTH`` columns ending in ``…`` (``--full`` shows it whole)."""
    return line if full or len(line) <= WIDTH else line[: WIDTH - 1] + "…"


def _wrapped(line: str, indent: str, full: bool) -> list[str]:
    """``line`` wrapped at ``WIDTH`` columns, later lines indented (whole with ``--full``)."""
    import textwrap

    if full or len(line) <= WIDTH:
        return [line]
    return textwrap.wrap(line, WIDTH, subsequent_indent=indent, break_on_hyphens=False) or [line]
