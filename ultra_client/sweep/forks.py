"""The other workers of ``ultra sweep --workers N`` on this machine: forked from this process once it has imported
what every worker needs, or (where ``fork`` is not safe) started as ``python -m ultra ...`` processes.

A forked worker begins where this process is: Python, ``ultra``, Optuna and its storages, the sweep, and each
in-process server's ``SPEC`` and tool modules are imported already, so its start-up is only its own storage
connection and servers. It runs the same command line as a started one (``cli.main``), and ends with its exit
code. The fork happens before any thread, event loop, storage connection or server exists in this process.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

# fork is used only where it is known to be safe with the libraries a worker imports (macOS: system frameworks
# break in a forked child, as the ``multiprocessing`` docs warn)
FORK_PLATFORMS = ("linux",)


class Forked:
    """``run()`` in a process forked from this one, with ``subprocess.Popen``'s ``wait`` and ``terminate``; the
    child ends with ``run``'s return value as its exit code (1 if it raised)."""

    def __init__(self, run: Callable[[], int]) -> None:
        sys.stdout.flush()  # else the child would write this process's buffered output again
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never return into the parent's code
            code = 1
            try:
                code = run()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        self.pid = pid
        self.returncode: int | None = None

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def terminate(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # already gone: wait() collects its status
                os.kill(self.pid, signal.SIGTERM)


def can_fork() -> bool:
    """Whether the workers may be forked here: a platform where that is safe, and no other thread running yet."""
    return hasattr(os, "fork") and sys.platform.startswith(FORK_PLATFORMS) and threading.active_count() == 1


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
    return [Forked(functools.partial(_worker, argv)) for _ in range(count)]


def _worker(argv: list[str]) -> int:
    from ultra_client.cli import main

    return main(argv)


def preload(locations: list[Any], url: str) -> None:
    """Import what each worker would import before its first claim: Optuna and the storage's modules (a database's:
    SQLAlchemy and Alembic), the sweep's worker, and every in-process server's ``SPEC`` and tool modules (its tools'
    own heavy libraries stay where they are used)."""
    import importlib

    import optuna.storages.journal  # noqa: F401 - imported here once, for every worker

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
