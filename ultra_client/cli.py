"""Argument parsing and error reporting for the ``ultra`` command."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import os
import sys
from typing import TextIO

USAGE_EXAMPLES = """examples:
  ultra build examples/load_data.yaml
  ultra run examples/load_data.yaml [--param FILE] [--timeout SECONDS] [--deadline SECONDS] [--full]
  ultra call benchmark.get_data benchmark.limit=3
  ultra tools [server]
  ultra mcp-config --host claude|vscode|cursor
  ultra report output/<run folder> [more runs or result files] [--out DIR] [--label NAME=PATH]
  ultra compare output/<run A> output/<run B> [more runs] [--out DIR] [--label NAME=PATH]
  ultra compare output/<run> --groups A B            (two groups of one run: benchmark.group_by)
  ultra run examples/umbrela.yaml --gate gate.yaml [--junit gate.xml]   (exit 1: a condition failed; docs/ci.md)
  ultra runs [--pipeline NAME] [--since 2026-11-01] [--rebuild]
  ultra export mlflow output/<run folder> [--tracking-uri URI] [--experiment NAME]
  ultra export wandb output/<run folder> [--project NAME] [--dir FOLDER] [--mode offline|online]
  ultra annotate data.jsonl --scale binary [--annotator NAME] [--port N]   (docs/annotate.md)
"""

# Every subcommand, each in its own module with ``add_parser(commands)`` and ``run(args) -> exit code``,
# in the order ``ultra --help`` lists them; a new one is one line here.
COMMANDS = {
    "build": "ultra_client.commands.build",
    "run": "ultra_client.commands.run",
    "call": "ultra_client.commands.call",
    "tools": "ultra_client.commands.tools",
    "mcp-config": "ultra_client.commands.mcp_config",
    "serve": "ultra_client.commands.serve",
    "sweep": "ultra_client.sweep.cli",
    "report": "ultra_client.report_cli",
    "compare": "ultra_client.compare_cli",
    "trec_eval": "ultra_client.trec_eval_command",
    "gate": "ultra_client.gates.cli",
    "runs": "ultra_client.runs.cli",
    "export": "ultra_client.export.cli",
    "annotate": "ultra_client.annotate.cli",
}
STANDALONE = ("trec_eval",)  # trec_eval's own command line: no servers, no anyio, its own errors and exit codes


def version() -> str:
    """The installed ultra-eval's version; in a checkout that is not installed, the servers' own."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("ultra-eval")
    except PackageNotFoundError:
        from ultra_kit.factory import __version__

        return __version__


class VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (reading package metadata costs time)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(f"ultra {version()}")
        parser.exit()


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="ultra",
        description="Compose MCP evaluation servers into YAML pipelines, or call one tool.",
        epilog=USAGE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action=VersionAction)
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS.values():
        importlib.import_module(module).add_parser(commands)
    return top


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Parse ``argv``; ``call`` takes its key=value arguments before and after its options."""
    top = parser()
    args, extra = top.parse_known_args(argv)
    if extra and args.command == "call" and not any(item.startswith("-") for item in extra):
        args.assignments = [*args.assignments, *extra]
    elif extra:
        top.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def check_seconds(args: argparse.Namespace) -> None:
    """``--timeout`` and ``--deadline`` must be finite positive numbers of seconds (nan, 0, -1 are refused)."""
    from ultra_client.errors import UltraError

    for option in ("timeout", "deadline"):
        value = getattr(args, option, None)
        if value is not None and not 0 < value < math.inf:
            raise UltraError(f"--{option} must be a positive number of seconds, e.g. --{option} 60; got {value:g}")


def enter_home(args: argparse.Namespace) -> None:
    """With ``$ULTRA_HOME`` set, ``run`` and ``call`` work in that folder, as a stdio server does: the paths
    typed on the command line keep meaning what they meant here; relative paths in settings and
    arguments (``data/...``, ``save_path``) then resolve against the project folder."""
    from ultra_base.environment import PROJECT_ROOT_ENV
    from ultra_kit.paths.project_root import enter_project_root

    if args.command not in ("run", "call") or not os.environ.get(PROJECT_ROOT_ENV, "").strip():
        return
    here = os.getcwd()
    for name in ("pipeline", "param", "output_dir", "args_file"):
        value = getattr(args, name, None)
        if value:
            setattr(args, name, os.path.join(here, os.path.expanduser(value)))
    if args.command == "call":  # key=@FILE names a file from here
        args.assignments = [_absolute_file_value(pair, here) for pair in args.assignments]
    try:
        enter_project_root()
    except SystemExit as exc:
        from ultra_client.errors import UltraError

        raise UltraError(str(exc)) from None


def _absolute_file_value(pair: str, here: str) -> str:
    key, sep, text = pair.partition("=")
    if sep and text.startswith("@") and len(text) > 1:
        return f"{key}=@{os.path.join(here, os.path.expanduser(text[1:]))}"
    return pair


def main(argv: list[str] | None = None, errors: TextIO | None = None) -> int:
    """Entry point of the ``ultra`` console script; returns the exit code. ``errors``: where the error line goes
    (standard error; a forked sweep worker's goes to the command, which prints it unless it is its own)."""
    args = parse(argv)
    command = importlib.import_module(COMMANDS[args.command])
    if args.command in STANDALONE:
        return command.run(args)
    from ultra_base.errors import InputError
    from ultra_client.calls.local_server import HungStep
    from ultra_client.errors import UltraError
    from ultra_client.signals import StoppedBySignal

    try:
        check_seconds(args)
        enter_home(args)
        code = command.run(args)
        sys.stdout.flush()  # a reader that closed the pipe shows up here, not at interpreter exit
    except BrokenPipeError:  # `ultra tools --json | head -1`: the reader has all it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the unflushed rest goes nowhere, without a second error
        return 141  # 128 + SIGPIPE, as a shell reports a program stopped by a closed pipe
    except (UltraError, InputError) as exc:
        print(error_line(exc), file=errors or sys.stderr, flush=True)  # before a possible os._exit
        return exit_now(getattr(exc, "exit_code", 1))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return exit_now(130)
    except HungStep as exc:
        print(error_line(exc), file=errors or sys.stderr, flush=True)  # before a possible os._exit
        return exit_now(1)
    except StoppedBySignal as exc:  # already reported; a busy in-process tool's thread must not delay the exit
        return exit_now(int(exc.code))
    return exit_now(code)


def error_line(exc: BaseException) -> str:
    """The line an error ends a command with (its ``${VAR}`` values and credentials redacted)."""
    from ultra_base.redact import redact_text

    return f"error: {redact_text(str(exc))}"


def exit_now(code: int) -> int:
    """``code``; but if an in-process tool's thread is still busy (a timeout or an interrupt left it), exit the
    process here: Python would otherwise wait for the thread at exit."""
    inprocess = sys.modules.get("ultra_kit.inprocess")
    if inprocess is None or not inprocess.running_threads():
        return code
    import logging

    from ultra_kit.files import discard_unfinished

    discard_unfinished()  # the busy tool's reserved, still empty result names and its half-written files
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":  # python -m ultra_client.cli ... as ``ultra ...`` (it ran nothing and exited 0)
    sys.exit(main())
