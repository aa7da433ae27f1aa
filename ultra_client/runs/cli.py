"""The ``ultra runs`` subcommand: the run folders of an output dir with their pipeline, date, status,
duration, key metrics, cost and gate verdict, from the index ``ultra run`` keeps (``ultra_client.runs.index``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HELP = "list the runs of an output dir (pipeline, date, status, duration, key metrics, cost, gate)"
GATE_STATUS = {0: "pass", 1: "fail", 2: "error"}


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``runs`` to the ``ultra`` subcommands."""
    runs = commands.add_parser("runs", help=HELP, description=HELP + " (index: <output dir>/runs.sqlite)")
    runs.add_argument("--pipeline", metavar="NAME", help="only the runs of this pipeline (its file name without .yaml)")
    runs.add_argument("--since", metavar="DATE", help="only runs started on or after DATE (YYYY-MM-DD[THH:MM])")
    runs.add_argument("--output-dir", default="output", help="where the run folders are (default: output)")
    runs.add_argument("--rebuild", action="store_true", help="recreate the index from the run folders first")
    runs.add_argument("--json", action="store_true", help="print the rows as JSON")
    runs.add_argument("--full", action="store_true", help="every column, uncut (else the table fits 100 columns)")
    return runs


def index_run(folder: Path, gate_code: int | None) -> None:
    """Record a finished run in its output dir's index; a failure to do so is a warning, never the run's failure."""
    import sqlite3

    from ultra_client.runs.index import record

    try:
        record(folder, gate=None if gate_code is None else GATE_STATUS.get(gate_code))
    except (sqlite3.Error, OSError) as exc:
        print(f"[ultra] warning: the run index of {folder.parent} was not updated: {exc}", file=sys.stderr)


def check_since(since: str | None) -> str | None:
    """``--since`` as an ISO date or time (compared with the index's ISO start times)."""
    if since is None:
        return None
    from datetime import datetime

    from ultra_client.errors import UltraError

    try:
        return datetime.fromisoformat(since).isoformat()
    except ValueError:
        raise UltraError(f"--since {since!r}: expected a date such as 2026-11-26 or 2026-11-26T14:30") from None


def run(args: argparse.Namespace) -> int:
    """Bring the index up to date with the folders, then print the runs, newest first."""
    import json
    import sqlite3

    from ultra_client.errors import UltraError
    from ultra_client.runs.index import INDEX_NAME, holds_runs, list_runs, readable_index, set_aside, sync

    since = check_since(args.since)
    output_dir = Path(args.output_dir)
    if not output_dir.is_dir():
        raise UltraError(f"--output-dir {output_dir}: no such folder (ultra run writes its run folders there)")
    try:
        if not holds_runs(output_dir):  # no index is created in a folder that holds no run
            print(f"no runs in {output_dir}" if not args.json else "[]")
            return 0
    except OSError as exc:
        raise UltraError(f"--output-dir {output_dir}: cannot list it: {exc.strerror or exc}") from None
    index = output_dir / INDEX_NAME
    try:
        if args.rebuild and index.exists() and not readable_index(output_dir):
            print(f"[ultra] {index} is corrupt: kept as {set_aside(output_dir)}; its gate verdicts and costs are "
                  "not in the new index", file=sys.stderr)  # fmt: skip
        written = sync(output_dir, rebuild=args.rebuild)
        rows = list_runs(output_dir, args.pipeline, since)
    except (sqlite3.Error, OSError) as exc:
        hint = (
            "; ultra runs --rebuild sets it aside (as runs.sqlite.corrupt) and recreates it from the run folders"
            if not args.rebuild and isinstance(exc, sqlite3.DatabaseError)
            else ""
        )
        raise UltraError(f"{index}: {exc}{hint}") from None
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if args.rebuild:
        print(f"rebuilt {output_dir / 'runs.sqlite'} from {written} run folder(s)")
    if not rows:
        print("no runs" + (" match" if args.pipeline or since else f" in {output_dir}"))
        return 0
    print("\n".join(runs_table(rows, full=args.full)))
    return 0


WIDTH = 100


def runs_table(rows: list[dict[str, Any]], *, full: bool) -> list[str]:
    """The runs as an aligned table. Unless ``full``: no pipeline and start columns (the folder's name,
    ``<pipeline>_<date>_<time>``, says both) and the key metrics cut to fit ``WIDTH`` columns."""
    from ultra_client.runs.index import key_metrics
    from ultra_client.summary.lines import align, cell

    head = ["folder", "pipeline", "started", "status", "seconds", "cost", "gate", "key metrics"]
    keep = range(len(head)) if full else [0, 3, 4, 5, 6, 7]
    table = [[head[i] for i in keep]]
    for row in rows:
        metrics = ", ".join(f"{name} {cell(value)}" for name, value in key_metrics(row["metrics"]).items())
        cost = "unknown" if row["cost"] is None else f"${row['cost']:.4f}"
        duration = "-" if row["duration"] is None else f"{row['duration']:.1f}"
        cells = [row["folder"], row["pipeline"], row["started"], row["status"], duration, cost, row["gate"] or "-",
                 metrics]  # fmt: skip
        table.append([cells[i] for i in keep])
    numeric = [head[i] in ("seconds", "cost") for i in keep]
    lines = align(table, numeric)
    if not full:
        lines = [line if len(line) <= WIDTH else line[: WIDTH - 1] + "…" for line in lines]
    lines.insert(1, "-" * max(len(line) for line in lines))
    return lines
