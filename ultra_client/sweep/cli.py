"""The ``ultra sweep`` subcommand: its options (their defaults are ``ultra_client.sweep.DEFAULTS``) and its output."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ultra_client.sweep import DEFAULTS

HELP = "run a pipeline over a grid, random or Bayesian (Optuna TPE) search of its settings"


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``sweep`` to the ``ultra`` subcommands; every option defaults to None (the sweep file's value)."""
    sweep = commands.add_parser("sweep", help=HELP, description=HELP + " (see docs/sweeps.md)")
    sweep.add_argument("pipeline", nargs="?", help="a pipeline file, or a YAML file holding a 'sweep:' block")
    sweep.add_argument(
        "--grid",
        action="append",
        metavar="KEY=VALUES",
        help="server.setting[.subkey]=YAML list, e.g. 'retriever.top_k=[1, 3, 5]'; with --random/--bayes also "
        "a range {low: 0, high: 1}, {low: 1, high: 50, log: true} or {choices: [...]}; repeatable",
    )
    search = sweep.add_mutually_exclusive_group()
    search.add_argument("--random", type=int, metavar="N", help="N seeded random draws from the space")
    search.add_argument("--bayes", type=int, metavar="N", help="N trials of Optuna's TPE sampler (needs --metric)")
    sweep.add_argument("--seed", type=int, help=f"seed of --random and --bayes (default {DEFAULTS['seed']})")
    sweep.add_argument("--metric", metavar="NAME", help="variable.key of a scalar result, e.g. eval_res.ndcg@10")
    direction = sweep.add_mutually_exclusive_group()
    direction.add_argument(
        "--minimize", action="store_true", default=None, help="rank lowest first (default: the metric's direction, "
        "as its server declares it: lowest first for toxicity, highest for most metrics)"
    )  # fmt: skip
    direction.add_argument("--maximize", action="store_false", dest="minimize", help="rank highest first")
    sweep.add_argument("--param", help="parameter file (default: <pipeline dir>/parameters/<stem>_parameter.yaml)")
    sweep.add_argument(
        "--output-dir",
        help="the sweep folder; rerun with the same one to resume "
        f"(default: {DEFAULTS['output_dir'].format(stem='<stem>')})",
    )
    sweep.add_argument(
        "--max-trials",
        type=int,
        metavar="N",
        help=f"refuse a sweep of more trials than N (default {DEFAULTS['max_trials']:,})",
    )
    sweep.add_argument("--timeout", type=float, help="seconds each step may take unless the step sets its own")
    sweep.add_argument(
        "--stdio", action="store_true", help="run every server as an MCP subprocess instead of in this process"
    )
    shared = sweep.add_argument_group("a study shared by many workers (docs/sweeps.md, 'On many machines')")
    shared.add_argument(
        "--storage",
        metavar="URL",
        help="Optuna storage every worker joins: postgresql+psycopg://user:${VAR}@host/db, mysql+pymysql://..., "
        "sqlite:///PATH or journal:PATH (a password only as ${VAR})",
    )
    shared.add_argument("--study", metavar="NAME", help="the study's name (default: the pipeline's file name stem)")
    shared.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="start N worker processes here (storage: the journal file DIR/study.journal unless given)",
    )
    shared.add_argument("--status", action="store_true", help="print the study's progress and best trial; run nothing")
    shared.add_argument("--report", action="store_true", help="write the study's table and plots; run nothing")
    shared.add_argument("--no-report", action="store_true", help="a worker only: run trials, write no table")
    shared.add_argument(
        "--heartbeat",
        type=int,
        metavar="S",
        help=f"seconds between heartbeats; a trial silent for 3 S is retried once (default {DEFAULTS['heartbeat']})",
    )
    return sweep


def run(args: argparse.Namespace) -> int:
    """Run the sweep, print its table; exit 1 only when every trial failed."""
    import anyio

    from ultra_client.errors import UltraError
    from ultra_client.signals import stop_like_interrupt
    from ultra_client.sweep import shared
    from ultra_client.sweep.run import finish, run_sweep

    if args.heartbeat is not None and args.heartbeat < 1:
        raise UltraError(f"--heartbeat {args.heartbeat}: give a whole number of seconds >= 1")
    if args.status:
        return shared.status(args)
    notes: list[str] = []
    reporter = None  # --workers N: the process that makes the report (processes/reporter.py)
    try:
        with stop_like_interrupt():
            if args.report:
                spec, rows = shared.report(args)
            elif args.pipeline is None:
                raise UltraError("ultra sweep: give a pipeline or sweep file (or --status / --report with --storage)")
            elif args.workers is not None:
                argv = sys.argv[sys.argv.index("sweep") :] if "sweep" in sys.argv else ["sweep", args.pipeline]
                spec, rows, notes, reporter = shared.local_workers(args, argv)
            else:
                spec, rows, notes = anyio.run(run_sweep, args, True)
                if args.no_report:
                    return 0
        if not rows:
            raise UltraError(f"{spec.pipeline}: the sweep ran no trial")
        table, files = (reporter.finish if reporter else finish)(spec, rows, notes, args.workers or 1)
    finally:
        if reporter is not None:
            reporter.close()
    print(table)
    for note in notes:
        print(f"note: {note}")
    for path in files:
        print(f"wrote {path}")
    failed = sum(1 for row in rows if row["status"] != "ok")
    if failed == len(rows):
        raise UltraError(f"every trial of the sweep failed ({failed}); the errors are in {files[0]}")
    return 0
