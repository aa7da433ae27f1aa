"""A real MCP stdio client's call in a process of its own, as a background run (tests/support/background.py).

``python -m tests.support.mcp_probe FOLDER SERVER TOOL`` does what ``call_over_mcp`` of tests/hostile/test_caps.py
does in a test: start ``python -m servers.SERVER`` over stdio (reading and writing in FOLDER), call TOOL with the
arguments in ``FOLDER/arguments.json``; it writes the result's ``is_error`` and text to ``FOLDER/result.json``. A
test that needs nothing of its own (no stub server) so has its call made on the second core, ahead of it, and
asserts on that file as it asserted on the result before: the client, the server and the arguments are the same,
only the process the client runs in changes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODULE = "tests.support.mcp_probe"


def over_mcp(server: str, tool: str, arguments: Callable[[Path], dict[str, Any]]) -> Callable[[Path], Any]:
    """The ``prepare`` of ``in_background``: ``tool`` of ``server`` called with ``arguments(folder)``."""
    from tests.support.background import Command

    def prepare(folder: Path) -> Command:
        (folder / "arguments.json").write_text(json.dumps(arguments(folder)), encoding="utf-8")
        return Command((str(folder), server, tool), timeout=300, module=MODULE)

    return prepare


def outcome(finished: Any) -> tuple[bool, str]:
    """The call's ``is_error`` and text, from the background run ``finished``."""
    assert finished.done.returncode == 0, finished.done.stderr[-3000:]
    result = json.loads((finished.folder / "result.json").read_text(encoding="utf-8"))
    return result["is_error"], result["text"]


def main(folder: str, server: str, tool: str) -> None:
    import anyio

    from tests.hostile.test_caps import call_over_mcp
    from tests.hostile.test_keys_hosts import text_of

    where = Path(folder)
    arguments = json.loads((where / "arguments.json").read_text(encoding="utf-8"))
    result = anyio.run(call_over_mcp, where, server, tool, arguments)
    answer = {"is_error": bool(result.is_error), "text": text_of(result)}
    (where / "result.json").write_text(json.dumps(answer), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
