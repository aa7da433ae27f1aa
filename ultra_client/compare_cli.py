"""The ``ultra compare`` subcommand: the report server's ``compare`` tool, called in this process through its
``SPEC`` as ``ultra report`` calls ``report``; prints the aligned table and where compare.html is.

Its defaults (resamples, confidence, seed, examples, scatter sample, where comparisons go) are those of
``servers/report/parameter.yaml``.
"""

from __future__ import annotations

import argparse
from typing import Any

HELP = "compare runs item by item (matched on ids): paired differences, CIs, p-values (Holm), compare.html"


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``compare`` to the ``ultra`` subcommands."""
    compare = commands.add_parser("compare", help=HELP, description=HELP + " (see docs/tools/report.md)")
    compare.add_argument(
        "paths",
        nargs="+",
        metavar="RUN_DIR_OR_RESULT_FILE",
        help="A B [C ...] (A is the baseline), or one file holding several runs",
    )
    compare.add_argument("--out", metavar="DIR", help="folder to write into (default: output/report/compare_<time>/)")
    compare.add_argument(
        "--label", action="append", default=[], metavar="NAME=PATH", help="show PATH as NAME; repeatable"
    )
    compare.add_argument(
        "--groups",
        nargs=2,
        metavar=("A", "B"),
        help="compare group B against group A of the one run given (its benchmark.group_by values); unpaired test",
    )
    return compare


def run(args: argparse.Namespace) -> int:
    """Compare the runs and print the table."""
    from ultra_client.report_cli import call_tool, labels_of

    labels = labels_of(args.label)
    arguments = {"run_paths": list(args.paths), "labels": labels}
    if args.groups:
        arguments["groups"] = list(args.groups)
    result = call_tool("compare", arguments, [*args.paths, *labels.values()], args.out)
    print(result["text"], end="")
    print(f"wrote {result['compare_path']}")
    print(f"      {result['json_path']} and {len(result['plot_paths'])} scatter PNG(s)")
    return 0
