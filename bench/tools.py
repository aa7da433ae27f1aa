"""How the benches reach a server: the tools of its ``SPEC``, called in process as ``ultra call`` calls them.

A bench imports no server module (``tests/test_imports.py`` checks it): what it measures is what a user gets from
the tool, arguments validated and results typed as over MCP.

    from bench.tools import call
    result = call("evaluation", "ppi", judged=..., human=..., save_path=...)
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import anyio

from ultra_kit.inprocess import LocalTool, call_local_tool, load_spec, local_tools

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def tool(server: str, name: str) -> LocalTool:
    """The tool ``name`` of the built-in server ``server``, ready to call in process."""
    spec = load_spec(f"servers.{server}", ROOT)
    if spec is None:
        raise SystemExit(f"servers.{server} has no SPEC")
    return local_tools(spec, only=name)[name]


def function(server: str, name: str) -> Any:
    """The tool's function with its parameter.yaml settings filled in (a sync tool returns its raw result: no
    validation between the call and the timing)."""
    found = tool(server, name)
    return functools.partial(found.function, **found.settings)


def call(server: str, name: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool in process with ``arguments`` (the rest from its parameter.yaml); its structured result."""
    return anyio.run(functools.partial(call_local_tool, tool(server, name), arguments))


async def call_async(server: str, name: str, **arguments: Any) -> dict[str, Any]:
    """``call`` from inside an event loop."""
    return await call_local_tool(tool(server, name), arguments)
