"""``ultra serve NAME``: run one built-in server in this process over stdio."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    serve = commands.add_parser("serve", help="serve one built-in server over stdio")
    serve.add_argument("server")
    return serve


def run(args: argparse.Namespace) -> int:
    serve(args.server)
    return 0


def serve(server: str) -> None:
    """``ultra serve name``: run one built-in server in this process over stdio."""
    from ultra_client.calls.locate import locate_named_server

    location = locate_named_server(server)
    sys.path.insert(0, str(location.root))
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    import runpy

    runpy.run_module(location.module, run_name="__main__")
