"""``ultra mcp-config --host claude|vscode|cursor``: the JSON an agent host needs to start the built-in servers."""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from pathlib import Path
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    config = commands.add_parser("mcp-config", help="print the JSON an agent host needs to start the servers")
    config.add_argument("--host", choices=["claude", "vscode", "cursor"], default="claude")
    return config


def run(args: argparse.Namespace) -> int:
    print(json.dumps(mcp_config(args.host), indent=2))
    return 0


def checkout_of(folder: Path) -> Path | None:
    """The ultra-eval checkout holding ``folder`` (a folder with ``servers/`` and the project's
    ``pyproject.toml``, ``folder`` or above it), or None."""
    for candidate in [folder, *folder.parents]:
        pyproject = candidate / "pyproject.toml"
        if (candidate / "servers").is_dir() and pyproject.is_file():
            with contextlib.suppress(OSError, UnicodeDecodeError):
                if re.search(r'^name\s*=\s*"ultra-eval"', pyproject.read_text("utf-8"), re.MULTILINE):
                    return candidate
    return None


def mcp_config(host: str) -> dict[str, Any]:
    """The JSON block an agent host needs to start every built-in server over stdio.

    The project is the checkout the command runs in (the working directory or a folder above it),
    else the one this code came from. Each entry names it twice: ``cwd`` (for hosts that honour it)
    and ``ULTRA_HOME`` in ``env`` (the server then works there whatever folder the host starts it
    in), so the defaults' relative paths (``data/...``) resolve and results go under ``<project>/output``.
    """
    from ultra_base.environment import PROJECT_ROOT_ENV
    from ultra_client.calls.locate import builtin_servers
    from ultra_client.calls.server_pool import ULTRA_HOME

    home = checkout_of(Path.cwd().resolve()) or ULTRA_HOME
    entries: dict[str, Any] = {}
    for name in builtin_servers(home):
        entry = {
            "command": sys.executable,
            "args": ["-m", f"servers.{name}"],
            "cwd": str(home),
            "env": {"PYTHONPATH": str(home), PROJECT_ROOT_ENV: str(home)},
        }
        entries[f"ultra-{name}"] = {"type": "stdio", **entry} if host == "vscode" else entry
    return {"servers": entries} if host == "vscode" else {"mcpServers": entries}
