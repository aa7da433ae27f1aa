"""The other workers of ``ultra sweep --workers N`` on this machine: forked from this process once it has imported
what every worker needs, or (where ``fork`` is not safe) started as ``python -m ultra ...`` processes.

A forked worker begins where this process is: Python, ``ultra``, Optuna and its storages, the sweep, and each
in-process server's ``SPEC``, tool modules and ``heavy_imports`` are imported already, so its start-up is only
its own storage connection and servers. It runs the same command line as a started one (``cli.main``), and
ends with its exit code. The fork happens before any thread, event loop, storage connection or server exists in
this process.
"""

from __future__ import annotations

import contextlib
import functools
import subprocess
import sys
import tempfile
import traceback
from typing import Any, TextIO

from ultra_client.sweep.processes.forked import Forked, can_fork


def start_workers(argv: list[str], count: int, locations: list[Any], url: str) -> list[Any]:
    """``count`` workers running ``ultra ARGV`` (``sweep ...``): forked from this process once it has imported what
    they need (``locations``: the pipeline's servers; ``url``: the storage), else started as new
    ``python -m ultra ARGV`` processes."""
    if count < 1:
        return []
    if can_fork():
        preload(locations, url)
    if not can_fork():  # (a module imported by ``preload`` may have started a thread)
        return [subprocess.Popen([sys.executable, "-m", "ultra", *argv]) for _ in range(count)]
    return [ForkedWorker(argv) for _ in range(count)]


class ForkedWorker(Forked):
    """A forked worker whose error line goes to a file this process reads once the worker has ended
    (``error_lines``), so that an error every worker meets (a study that runs another sweep) is printed once."""

    def __init__(self, argv: list[str]) -> None:
        # one open file, shared with the child; closed by error_lines (or with this object)
        self.errors = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self._lines: list[str] | None = None
        super().__init__(functools.partial(_worker, argv, self.errors))

    def error_lines(self) -> list[str]:
        """What the worker wrote as its error (nothing while it runs, or when it ended without one)."""
        if self.returncode is None:
            return []
        if self._lines is None:
            with self.errors:
                self.errors.seek(0)
                self._lines = self.errors.read().splitlines()
        return self._lines


def _worker(argv: list[str], errors: TextIO) -> int:
    from ultra_client.cli import main

    try:
        return main(argv, errors)
    except Exception:  # a fault, not a user's mistake: its traceback, shown by the command
        traceback.print_exc(file=errors)
        return 1
    finally:
        errors.flush()


def preload(locations: list[Any], url: str) -> None:
    """Import what each worker would import before its first claim: Optuna and the storage's modules (a database's:
    SQLAlchemy and Alembic), the sweep's worker, and every in-process server's ``SPEC`` and tool modules; and what
    its first trial would import: the libraries each such server names as its ``heavy_imports`` (BM25, pyarrow).
    Meanwhile the report process (``processes/reporter.py``) imports the report's libraries on the other core."""
    import importlib
    import importlib.util

    try:
        import optuna.storages.journal  # noqa: F401 - imported here once, for every worker
    except ImportError:  # each worker says what to install (storage._optuna)
        return

    if not url.startswith("journal:"):
        for module in ("sqlalchemy.orm", "alembic.command", "alembic.migration"):
            importlib.import_module(module)

    import ultra_client.sweep.run  # noqa: F401
    import ultra_client.sweep.storage  # noqa: F401
    import ultra_client.sweep.worker  # noqa: F401
    from ultra_kit.inprocess import load_spec

    for location in locations:
        spec = None if location.stdio else load_spec(location.module, location.root)
        if spec is not None:
            with contextlib.suppress(Exception):  # a tool module that fails to import: each worker reports it
                for _ in spec.load_tools():  # a generator: each module is imported as its tools are listed
                    pass
            for module in spec.heavy_imports:
                if importlib.util.find_spec(module.split(".")[0]) is not None:
                    with contextlib.suppress(Exception):  # its tools report it where they use it
                        importlib.import_module(module)
