"""``ultra sweep`` on a shared study: ``--status`` and ``--report`` read the storage from any machine, and
``--workers N`` starts N worker processes on this one (then reports)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

from ultra_client.errors import UltraError
from ultra_client.sweep import DEFAULTS

LOCAL_STORAGE = "sqlite:///{folder}/study.db"  # --workers N without --storage


def require_study(args: argparse.Namespace, what: str) -> None:
    if not args.storage or not args.study:
        raise UltraError(f"{what} reads a shared study: give --storage URL and --study NAME")


def open_study(args: argparse.Namespace) -> tuple[Any, Any, dict[str, Any]]:
    from ultra_client.sweep.storage import load_study, open_storage

    handle = open_storage(args.storage, args.heartbeat or DEFAULTS["heartbeat"])
    study, identity = load_study(handle, args.study)
    return handle, study, identity


def status(args: argparse.Namespace) -> int:
    """Print the study's progress and its best trial so far."""
    from ultra_client.sweep.status import status_text

    require_study(args, "--status")
    handle, study, identity = open_study(args)
    print(status_text(args.study, handle.shown, study, identity))
    return 0


def report(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]]]:
    """The sweep a study holds and its finished trials' rows, for ``finish``."""
    from ultra_client.sweep.status import rows_of, spec_of

    require_study(args, "--report")
    _, study, identity = open_study(args)
    spec = spec_of(identity, args.output_dir)
    spec.output_dir.mkdir(parents=True, exist_ok=True)
    return spec, rows_of(study)


def worker_command(argv: list[str], storage: str, study: str) -> list[str]:
    """This command for one worker: without ``--workers N``, with the storage and study, without the report."""
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word in ("--workers", "--storage", "--study"):
            skip = True
            continue
        if word.startswith(("--workers=", "--storage=", "--study=")):
            continue
        kept.append(word)
    return [sys.executable, "-m", "ultra", *kept, "--storage", storage, "--study", study, "--no-report"]


def local_workers(args: argparse.Namespace, argv: list[str]) -> tuple[Any, list[dict[str, Any]], list[str]]:
    """Start ``--workers N`` worker processes on one study (SQLite in the sweep folder unless ``--storage``); wait
    for them; the study's rows. The study is created here first, so the workers only join it."""
    from ultra_client.pipeline.model import load_pipeline, require_file
    from ultra_client.sweep.run import join_shared
    from ultra_client.sweep.spec import build_spec, with_direction

    if args.workers < 1:
        raise UltraError(f"--workers {args.workers}: give a number of worker processes >= 1")
    spec = build_spec(args)
    pipeline = load_pipeline(require_file(spec.pipeline))
    if spec.minimize is None:
        from ultra_client.gates.direction import pipeline_directions

        with_direction(spec, pipeline_directions(pipeline) if spec.metric else {})
    spec.output_dir.mkdir(parents=True, exist_ok=True)
    args.storage = args.storage or LOCAL_STORAGE.format(folder=spec.output_dir.resolve())
    args.study = args.study or pipeline.path.stem
    handle = join_shared(args, spec, pipeline)
    command = worker_command(argv, args.storage, args.study)
    processes = [subprocess.Popen(command) for _ in range(args.workers)]
    try:
        codes = [process.wait() for process in processes]
    except BaseException:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait()
        raise
    failed = [f"worker {n} exited with {code}" for n, code in enumerate(codes, start=1) if code != 0]
    if failed and all(code != 0 for code in codes):
        raise UltraError(f"every worker failed ({'; '.join(failed)}); see the lines above")
    from ultra_client.sweep.status import rows_of

    return spec, rows_of(handle.study), failed
