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
        print(describe_tools(table))
    return 0


async def list_tools(server: str | None) -> dict[str, dict[str, ToolInfo]]:
    """``ultra tools [server]``: every tool of the built-in servers (or of one)."""
    from ultra_client.calls.server_pool import ServerPool, locate_server
    from ultra_client.locate import builtin_servers, locate_named_server, scratch_logs, tool_table

    if server is not None:
        locations = [dataclasses.replace(locate_named_server(server), stdio=True)]
    else:
        locations = [locate_server(name, path, [Path.cwd()], stdio=True) for name, path in builtin_servers().items()]
    async with scratch_logs("tools") as logs, ServerPool(locations, logs) as pool:
        return tool_table(pool)


def describe_tools(table: dict[str, dict[str, ToolInfo]]) -> str:
    """Human-readable listing: per tool, its settings with defaults, variables and outputs."""
    lines: list[str] = []
    for alias, tools in table.items():
        lines.append(f"{alias}")
        for info in tools.values():
            summary = info.description.splitlines()[0] if info.description else ""
            lines.append(f"  {alias}.{info.name}: {summary}")
            variables = [v + ("" if v in info.required else "?") for v in info.variables]
            lines.append(f"    variables: {', '.join(variables) or '-'}")
            for name, default in info.settings.items():
                lines.append(f"    setting {name} = {json.dumps(default, ensure_ascii=False)}")
            lines.append(f"    outputs: {', '.join(info.outputs) or '-'}")
    return "\n".join(lines)
