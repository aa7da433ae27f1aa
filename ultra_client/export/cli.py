"""The ``ultra export`` subcommand: ``ultra export mlflow RUN... [--tracking-uri URI] [--experiment NAME]``."""

from __future__ import annotations

import argparse
from typing import Any

HELP = "log run folders to a tracker: mlflow (params, every scalar result, the folder as artifacts)"
DEFAULT_EXPERIMENT = "ultra-eval"


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``export`` to the ``ultra`` subcommands."""
    export = commands.add_parser("export", help=HELP, description=HELP + " (see docs/ci.md)")
    export.add_argument("tracker", choices=["mlflow"])
    export.add_argument("runs", nargs="+", metavar="RUN_FOLDER")
    export.add_argument("--tracking-uri", metavar="URI", help="MLflow tracking URI (default: MLflow's own, e.g. "
                        "$MLFLOW_TRACKING_URI); file:/path for a local store")  # fmt: skip
    export.add_argument("--experiment", metavar="NAME", default=DEFAULT_EXPERIMENT,
                        help=f"MLflow experiment, created if missing (default: {DEFAULT_EXPERIMENT})")  # fmt: skip
    return export


def run(args: argparse.Namespace) -> int:
    """Export each run folder; print the MLflow run id of each."""
    from ultra_client.export.mlflow import export_runs

    for folder, run_id in export_runs(args.runs, args.tracking_uri, args.experiment):
        print(f"{folder}: mlflow run {run_id}")
    return 0
