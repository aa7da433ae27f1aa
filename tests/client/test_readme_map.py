"""README's map of the tool cards is checked against the servers' SPECs (the registry of tools), so a new
server or tool, or a renamed one, cannot leave it stale: each built-in server has its row linking its card,
and each tool name a row writes in backticks is a tool of that row's server."""

from __future__ import annotations

import re
from pathlib import Path

from ultra_client.calls.locate import builtin_servers
from ultra_kit.inprocess import load_spec, tool_names

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| \[docs/tools/(\w+)\.md\]\(docs/tools/\1\.md\) \| (.*) \|$", re.MULTILINE)


def tools_by_server() -> dict[str, set[str]]:
    found = {}
    for name in builtin_servers(ROOT):
        spec = load_spec(f"servers.{name}", ROOT)
        assert spec is not None, name
        found[name] = set(tool_names(spec))
    return found


def test_each_server_has_its_row_and_each_named_tool_is_its_own() -> None:
    rows = dict(ROW.findall((ROOT / "README.md").read_text(encoding="utf-8")))
    tools = tools_by_server()
    assert set(rows) == set(tools), "README's map of docs/tools/: one row per built-in server"
    every_tool = set().union(*tools.values())
    for server, text in rows.items():
        named = {word for word in re.findall(r"`([a-z_]+)`", text) if word in every_tool}
        assert named, f"README: the row of {server} names none of its tools"
        assert named <= tools[server], f"README: the row of {server} names {sorted(named - tools[server])}"
        assert (ROOT / "docs" / "tools" / f"{server}.md").is_file()
