"""``ultra call server.tool key=value ...``: call one tool and print its result as JSON (``calls.calling``)."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    call = commands.add_parser("call", help="call one tool and print its result as JSON")
    call.add_argument("target", metavar="server.tool")
    call.add_argument(
        "assignments",
        nargs="*",
        metavar="key=value",
        help="value parsed as YAML; a.b=v sets one key of a mapping; key=@F.yaml (or .json) reads it from F",
    )
    call.add_argument(
        "--args-file",
        metavar="FILE",
        help="a YAML or JSON mapping of all arguments (values too large for a command line); key=value applies on top",
    )
    call.add_argument(
        "--timeout", type=float, default=None, help="seconds the tool may take (the server then runs as a subprocess)"
    )
    call.add_argument(
        "--stdio", action="store_true", help="start the server and call over MCP stdio instead of in-process"
    )
    return call


def run(args: argparse.Namespace) -> int:
    import anyio

    from ultra_client.calls import calling
    from ultra_client.signals import stop_like_interrupt

    with stop_like_interrupt("the call did not finish and wrote no result"):
        call = functools.partial(calling.call, stdio=args.stdio, args_file=args.args_file)
        result = anyio.run(call, args.target, args.assignments, args.timeout)
    json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0
