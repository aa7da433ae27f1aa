"""The ``ultra report`` subcommand: the report server's code, called in this process.

Its defaults (bootstrap resamples, confidence, seed, table rows, where reports go) are those of
``servers/report/parameter.yaml``.
"""

from __future__ import annotations

import argparse
from typing import Any

HELP = "write report.html (summary, CIs, boxplots, per-query table), PNGs and CSVs from result files or run folders"


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


def run(args: argparse.Namespace) -> int:
    """Write the report and print where it is."""
    from servers.report.build import write_report
    from ultra_client.errors import UltraError
    from ultra_kit.settings import defaults

    labels = labels_of(args.label)
    if not args.paths and not labels:
        raise UltraError("ultra report needs at least one run folder or result file, e.g. ultra report output/run_1")
    settings = defaults("report")
    files = write_report(
        args.paths,
        labels=labels,
        out_dir=args.out,
        save_path=settings["save_path"],
        bootstrap_resamples=settings["bootstrap_resamples"],
        confidence=settings["confidence"],
        seed=settings["seed"],
        max_table_rows=settings["max_table_rows"],
    )
    print(f"runs: {', '.join(files.runs) or 'none with per-query values'}")
    print(f"wrote {files.report_path}")
    print(f"      {files.summary_csv_path}, {files.per_query_csv_path} and {len(files.plot_paths)} PNG plot(s)")
    return 0
