"""The ``ultra export`` subcommand: ``ultra export mlflow|wandb RUN...`` (see docs/ci.md)."""

from __future__ import annotations

import argparse
from typing import Any

HELP = "log run folders to a tracker, mlflow or wandb (params, every scalar result, the folder as artifacts)"
DEFAULT_NAME = "ultra-eval"  # MLflow experiment, W&B project
OPTIONS = {"mlflow": ("tracking_uri", "experiment"), "wandb": ("project", "dir", "mode")}  # each tracker's own


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``export`` to the ``ultra`` subcommands."""
    export = commands.add_parser("export", help=HELP, description=HELP + " (see docs/ci.md)")
    export.add_argument("tracker", choices=["mlflow", "wandb"])
    export.add_argument("runs", nargs="+", metavar="RUN_FOLDER")
    mlflow = export.add_argument_group("mlflow")
    mlflow.add_argument("--tracking-uri", metavar="URI", help="MLflow tracking URI (default: MLflow's own, e.g. "
                        "$MLFLOW_TRACKING_URI); file:/path for a local store")  # fmt: skip
    mlflow.add_argument("--experiment", metavar="NAME",
                        help=f"MLflow experiment, created if missing (default: {DEFAULT_NAME})")  # fmt: skip
    wandb = export.add_argument_group("wandb")
    wandb.add_argument("--project", metavar="NAME", help=f"W&B project (default: {DEFAULT_NAME})")
    wandb.add_argument("--dir", metavar="FOLDER", help="where W&B writes its wandb/ folder (default: W&B's own, "
                       "$WANDB_DIR or the current directory)")  # fmt: skip
    wandb.add_argument("--mode", choices=["offline", "online"], help="offline: write the runs locally, never touch "
                       "the network (upload later with wandb sync); online: needs wandb login "
                       "(default: $WANDB_MODE if offline or online, else offline)")  # fmt: skip
    return export


def run(args: argparse.Namespace) -> int:
    """Export each run folder; print the tracker's run id of each (and W&B's local run directory)."""
    from ultra_client.errors import UltraError

    for tracker, names in OPTIONS.items():
        given = [name for name in names if getattr(args, name) is not None]
        if tracker != args.tracker and given:
            flag = "--" + given[0].replace("_", "-")
            raise UltraError(f"{flag} is an option of ultra export {tracker}, not of ultra export {args.tracker}")
    if args.tracker == "wandb":
        from ultra_client.export.wandb import default_mode, export_runs

        mode = args.mode or default_mode()
        logged = export_runs(args.runs, args.project or DEFAULT_NAME, args.dir, mode)
        for folder, run_id, local in logged:
            print(f"{folder}: wandb run {run_id} ({local})")
        if mode == "offline":
            print("upload later with: wandb sync " + " ".join(local for _, _, local in logged))
        return 0
    from ultra_client.export.mlflow import export_runs as to_mlflow

    for folder, run_id in to_mlflow(args.runs, args.tracking_uri, args.experiment or DEFAULT_NAME):
        print(f"{folder}: mlflow run {run_id}")
    return 0
