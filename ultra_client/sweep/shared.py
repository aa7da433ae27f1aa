"""``ultra sweep`` on a shared study: ``--status`` and ``--report`` read the storage from any machine, and
``--workers N`` starts N worker processes on this one (then reports)."""

from __future__ import annotations

import argparse
from typing import Any

from ultra_client.errors import UltraError
from ultra_client.sweep import DEFAULTS

# --workers N without --storage: Optuna's journal file, which a worker reads by replaying only what was appended
# since its last look (no SQL, no SQLAlchemy or Alembic to import): 0.8-1.5 s less CPU than SQLite for 12 trials
LOCAL_STORAGE = "journal:{folder}/study.journal"


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


def worker_arguments(argv: list[str], storage: str, study: str) -> list[str]:
    """This command's ``ultra`` arguments for one worker: without ``--workers N``, with the storage and study,
    without the report."""
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
    return [*kept, "--storage", storage, "--study", study, "--no-report"]


def local_workers(args: argparse.Namespace, argv: list[str]) -> tuple[Any, list[dict[str, Any]], list[str], Any]:
    """``--workers N``: this process is worker 1, and N - 1 worker processes join it on one study (a journal file in the
    sweep folder unless ``--storage``); the study's rows once every worker is done, and the process that makes the
    report (``processes/reporter.py``; None: this one makes it), which the caller closes.

    The report process is forked first, before this process imports anything more, so that its imports have the
    other core to themselves for longest. The other workers start as soon as the sweep, its metric and the
    storage's URL are checked, so that their start-up (storage, servers) overlaps this process's own; on Linux
    they are forked from this process once it has imported what they need (``processes/forks.py``). Whichever
    opens the storage first creates the study, the others join it (``storage.join_study``)."""
    from ultra_client.sweep.processes.reporter import start_reporter

    if args.workers < 1:
        raise UltraError(f"--workers {args.workers}: give a number of worker processes >= 1")
    reporter = start_reporter(args.workers)
    processes: list[Any] = []
    try:
        processes, result = _start_and_run(args, argv, reporter is None)
        codes = [process.wait() for process in processes]
    except BaseException:
        stop(processes)
        if reporter is not None:
            reporter.close()
        raise
    show_worker_errors(processes, None)
    spec, rows, notes = result
    failed = [f"worker {n} exited with {code}" for n, code in enumerate(codes, start=2) if code != 0]
    return spec, rows, [*notes, *failed], reporter


def _start_and_run(args: argparse.Namespace, argv: list[str], warm_here: bool) -> tuple[list[Any], tuple]:
    """Check the sweep, start the other workers, run this one (``run.run_sweep``); the workers started and this
    worker's spec, rows and notes."""
    import anyio

    from ultra_client.calls.locate import pipeline_locations
    from ultra_client.pipeline.model import load_pipeline, require_file
    from ultra_client.sweep.processes.forks import start_workers
    from ultra_client.sweep.run import run_sweep, swept_settings
    from ultra_client.sweep.spec import build_spec
    from ultra_client.sweep.storage import expand_url

    spec = build_spec(args)
    pipeline = load_pipeline(require_file(spec.pipeline))
    if spec.metric is None:
        raise UltraError("--workers: a shared study optimises a metric; name it with --metric, e.g. eval_res.map")
    try:
        spec.output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UltraError(f"--output-dir {spec.output_dir}: cannot create it ({exc.strerror or exc})") from None
    args.storage = args.storage or LOCAL_STORAGE.format(folder=spec.output_dir.resolve())
    args.study = args.study or pipeline.path.stem
    expand_url(args.storage)  # a malformed URL or a literal password is refused before any worker starts
    swept_settings(spec, pipeline)  # so is a swept key the parameter file lacks (each worker checks again)
    worker = worker_arguments(argv, args.storage, args.study)
    locations = pipeline_locations(pipeline, bool(args.stdio))
    processes = start_workers(worker, args.workers - 1, locations, args.storage)
    try:
        return processes, anyio.run(run_sweep, args, warm_here)
    except BaseException as exc:
        from ultra_client.cli import error_line

        stop(processes)
        show_worker_errors(processes, error_line(exc))
        raise


def stop(processes: list[Any]) -> None:
    """Terminate the workers started here and wait for each."""
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait()


def show_worker_errors(processes: list[Any], own: str | None) -> None:
    """Print the error lines of the forked workers that have ended, but not one that repeats this process's own
    (``own``: the line it ends with), so that an error every worker meets is printed once."""
    from ultra_client.sweep.trials import say

    for number, process in enumerate(processes, start=2):
        for line in process.error_lines() if hasattr(process, "error_lines") else []:
            if line != own:
                say(f"worker {number}: {line}")
