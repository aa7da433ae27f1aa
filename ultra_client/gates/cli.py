"""``ultra run --gate FILE [--junit FILE]`` (with a pipeline's own ``gate:`` block) and ``ultra gate RUN``.

Exit statuses: 0 when every condition passed, 1 when one failed, 2 when one could not be evaluated (an
unknown metric, a baseline folder that is not a finished run).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

HELP = "judge a finished run folder against gate conditions (exit 0 pass, 1 fail, 2 cannot evaluate)"
GATE_HELP = "a YAML file holding a 'gate:' list of conditions on the run's results (see docs/ci.md)"
JUNIT_HELP = "also write the gate's verdicts as JUnit XML to FILE"


def add_run_options(run: argparse.ArgumentParser) -> None:
    """``--gate`` and ``--junit`` of ``ultra run``."""
    run.add_argument("--gate", metavar="FILE", help=GATE_HELP + "; added to the pipeline's own 'gate:' block")
    run.add_argument("--junit", metavar="FILE", help=JUNIT_HELP)


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``gate`` to the ``ultra`` subcommands."""
    gate = commands.add_parser("gate", help=HELP, description=HELP + " (see docs/ci.md)")
    gate.add_argument("run_folder", metavar="RUN_FOLDER")
    gate.add_argument("--gate", metavar="FILE", required=True, help=GATE_HELP)
    gate.add_argument("--junit", metavar="FILE", help=JUNIT_HELP)
    return gate


def run_conditions(args: argparse.Namespace) -> list:
    """The conditions ``ultra run`` will judge: the pipeline's ``gate:`` block, then those of ``--gate FILE``.

    Read before the run starts, so a malformed gate costs nothing.
    """
    from ultra_client.compat.nemo import is_nemo_job
    from ultra_client.gates.spec import check_gate_options, read_gate_file
    from ultra_client.pipeline.model import load_pipeline, require_file

    path = require_file(args.pipeline)
    conditions = [] if is_nemo_job(path) is not None else list(load_pipeline(path).gate)  # a NeMo job: --gate only
    if getattr(args, "gate", None):
        conditions += read_gate_file(args.gate)
    check_gate_options(getattr(args, "junit", None), conditions, reads=(path, getattr(args, "gate", None) or ""))
    return conditions


def judge_folder(
    conditions: list, folder: str | Path, junit: str | None, suite: str | None = None, directions: dict | None = None
) -> int:
    """Print the verdict table of ``folder`` (write JUnit XML if asked, its suite named ``suite``, by default the
    folder's name); the exit status. ``directions``: the metrics' (``gates.direction``; None: the built-in servers')."""
    import sys

    from ultra_client.gates.junit import write_junit
    from ultra_client.gates.verdict import exit_code, judge, read_run, verdict_lines

    if not conditions:
        return 0
    try:
        run = read_run(folder)
    except FileNotFoundError as exc:  # nothing to judge: the gate cannot be evaluated
        print(f"error: {exc}", file=sys.stderr)
        return 2
    verdicts = judge(conditions, run, directions)
    print()
    for line in verdict_lines(verdicts):
        print(line)
    if junit:
        print(f"wrote {write_junit(junit, verdicts, suite or Path(folder).name)}")
    return exit_code(verdicts)


def after_run(args: argparse.Namespace, conditions: list, folder: Path) -> int:
    """``ultra run``'s gate over the run it just finished, in the directions its servers declare; the JUnit suite
    is named after the pipeline."""
    from ultra_client.compat.nemo import is_nemo_job
    from ultra_client.gates.direction import pipeline_directions
    from ultra_client.pipeline.model import load_pipeline

    path = Path(args.pipeline)
    directions = None if not conditions or is_nemo_job(path) is not None else pipeline_directions(load_pipeline(path))
    return judge_folder(conditions, folder, getattr(args, "junit", None), path.stem, directions)


def run(args: argparse.Namespace) -> int:
    """``ultra gate RUN_FOLDER --gate FILE``: judge a run that already finished."""
    from ultra_client.gates.spec import check_gate_options, read_gate_file

    conditions = read_gate_file(args.gate)
    check_gate_options(args.junit, conditions, reads=(args.gate, Path(args.run_folder) / "memory.json"))
    return judge_folder(conditions, args.run_folder, args.junit)
