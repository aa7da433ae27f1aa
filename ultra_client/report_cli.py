"""The ``ultra report`` subcommand: the report server's tool (named like the server), called in this
process through its ``SPEC`` as ``ultra call`` calls a tool.

Its defaults (bootstrap resamples, confidence, seed, table rows, where reports go) are those of
``servers/report/parameter.yaml``.
"""

from __future__ import annotations

import argparse
from typing import Any

SERVER = "report"  # ultra report calls this server's tool of the same name
HELP = (
    "write report.html (summary, CIs, charts, risk table, comparison, per-query table) from result files or run folders"
)


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``report`` to the ``ultra`` subcommands."""
    report = commands.add_parser("report", help=HELP, description=HELP + " (see docs/tools/report.md)")
    report.add_argument("paths", nargs="*", metavar="RUN_DIR_OR_RESULT_FILE")
    report.add_argument("--out", metavar="DIR", help="folder to write into (default: output/report/report_<time>/)")
    report.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="show PATH (one of the paths, or another one) as NAME; repeatable",
    )
    return report


def labels_of(items: list[str]) -> dict[str, str]:
    """{name: path} from ``NAME=PATH`` arguments."""
    from ultra_client.errors import UltraError

    labels: dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise UltraError(f"--label {item!r}: expected NAME=PATH, e.g. --label bm25=output/run_1")
        labels[name.strip()] = path.strip()
    return labels


def call_tool(tool: str, arguments: dict[str, Any], paths: list[str], out: str | None) -> dict[str, Any]:
    """Call the report server's ``tool`` in this process (as ``ultra call`` does): the ``paths`` the user
    named may be read, and ``out`` (a folder named on the command line) may lie anywhere."""
    import os

    import anyio

    from ultra_base.errors import add_read_root
    from ultra_client.calls.calling import ToolCallFailed, call_in_process
    from ultra_client.calls.locate import locate_named_server
    from ultra_client.errors import UltraError
    from ultra_kit.inprocess import load_spec
    from ultra_kit.paths.output_root import ALLOW_OUTSIDE_ENV

    location = locate_named_server(SERVER)
    spec = load_spec(location.module, location.root)
    if spec is None:
        raise UltraError(f"the {SERVER} server ({location.package_dir}) cannot be loaded in this process")
    for path in paths:  # what the user named on the command line may be read
        add_read_root(path)
    if out is not None:  # a folder the user named on the command line may lie anywhere, as before
        arguments = {**arguments, "out_dir": out}
        os.environ[ALLOW_OUTSIDE_ENV] = "1"
    try:
        return anyio.run(call_in_process, f"{SERVER}.{tool}", spec, [], arguments)
    except ToolCallFailed as exc:
        raise UltraError(exc.reason) from None


def run(args: argparse.Namespace) -> int:
    """Call the report server's tool in this process (as ``ultra call`` does) and print where the report is."""
    from ultra_client.errors import UltraError

    labels = labels_of(args.label)
    if not args.paths and not labels:
        raise UltraError("ultra report needs at least one run folder or result file, e.g. ultra report output/run_1")
    arguments = {"result_paths": list(args.paths), "labels": labels}
    files = call_tool(SERVER, arguments, [*args.paths, *labels.values()], args.out)
    plots = files["plot_paths"]
    print(f"runs: {', '.join(files['runs']) or 'none with per-query values'}")
    print(f"wrote {files['report_path']}")
    print(f"      {files['summary_csv_path']}, {files['per_query_csv_path']} and {len(plots)} PNG plot(s)")
    return 0
