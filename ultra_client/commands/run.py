"""``ultra run PIPELINE``: run a pipeline (``ultra_client.running``), or with ``--estimate`` predict what
its LLM steps would cost (``ultra_client.estimate``: nothing is sent); ``--gate`` judges the run."""

from __future__ import annotations

import argparse
import functools
import importlib
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    run = commands.add_parser("run", help="run a pipeline (builds its parameter file first if missing)")
    run.add_argument("pipeline")
    run.add_argument("--param", help="parameter file (default: <pipeline dir>/parameters/<stem>_parameter.yaml)")
    run.add_argument(
        "--timeout", type=float, default=None, help="seconds each step may take unless the step sets its own"
    )
    run.add_argument(
        "--output-dir", default=None, help="where run folders are written (default: output, under $ULTRA_HOME if set)"
    )
    run.add_argument(
        "--deadline", type=float, default=None, help="seconds the whole run may take; then its servers are stopped"
    )
    run.add_argument(
        "--stdio", action="store_true", help="run every server as an MCP subprocess instead of in this process"
    )
    run.add_argument(
        "--full", action="store_true", help="print every result at the end, uncut (default: fit 100 columns)"
    )
    run.add_argument(
        "--estimate",
        action="store_true",
        help="send no LLM request: print each LLM step's predicted requests, tokens and cost (low-high)",
    )
    importlib.import_module("ultra_client.gates.cli").add_run_options(run)
    return run


def run(args: argparse.Namespace) -> int:
    import anyio

    from ultra_client.gates.cli import after_run, run_conditions

    gate = run_conditions(args)
    if args.estimate:  # checked, not judged: nothing runs
        from ultra_client.estimate import estimate_lines, estimate_run

        estimate = functools.partial(estimate_run, stdio=args.stdio, gate=gate)
        print("\n".join(estimate_lines(anyio.run(estimate, args.pipeline, args.param, args.timeout))))
        if gate:
            print(f"gate: {len(gate)} condition(s) checked; they are judged after a run, not by --estimate")
        return 0
    from ultra_client.running import run_pipeline
    from ultra_client.signals import stop_like_interrupt

    with stop_like_interrupt():
        pipeline = functools.partial(run_pipeline, deadline=args.deadline, stdio=args.stdio, full=args.full, gate=gate)
        folder = anyio.run(pipeline, args.pipeline, args.param, args.timeout, args.output_dir or "output")
    print(f"done: {folder}")
    code = after_run(args, gate, folder)
    importlib.import_module("ultra_client.runs.cli").index_run(folder, code if gate else None)
    return code
