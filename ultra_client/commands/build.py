"""``ultra build PIPELINE``: check a pipeline and write its parameter file (``ultra_client.building``)."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    build = commands.add_parser("build", help="check a pipeline and write its parameter file")
    build.add_argument("pipeline")
    build.add_argument("--stdio", action="store_true", help="learn the tools from MCP subprocesses")
    return build


def run(args: argparse.Namespace) -> int:
    import anyio

    from ultra_client.building import build

    target, report = anyio.run(build, args.pipeline, args.stdio)
    print(f"wrote {target}")
    if report.added:
        print(listed("  added: ", report.added))
    if report.dropped:
        print(listed("  dropped (no longer used): ", report.dropped))
    if report.rewritten:
        print("  written anew (a section in flow style could not be edited line by line): comments dropped")
    return 0


def listed(head: str, names: list[str], width: int = 100) -> str:
    """``head`` and the names, comma-separated, wrapped at ``width`` columns under the first name."""
    import textwrap

    text = head + ", ".join(names)
    indent = " " * len(head)
    return "\n".join(textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False)) or text
