"""A function run in a process forked from this one (``Forked``), where forking is safe (``can_fork``): a child
begins with everything this process has imported, so it starts at once."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable

# fork is used only where it is known to be safe with the libraries a worker imports (macOS: system frameworks
# break in a forked child, as the ``multiprocessing`` docs warn)
FORK_PLATFORMS = ("linux",)


class Forked:
    """``run()`` in a process forked from this one, with ``subprocess.Popen``'s ``wait`` and ``terminate``; the
    child ends with ``run``'s return value as its exit code (1 if it raised)."""

    def __init__(self, run: Callable[[], int]) -> None:
        sys.stdout.flush()  # else the child would write this process's buffered output again
        sys.stderr.flush()
        # Python's recipe for forked workers (the gc module's docs): what exists now moves to a generation no
        # collection visits, so the child's collections skip what it inherited (and leave those pages shared)
        gc.freeze()
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
    """Whether this process may fork: a platform where that is safe, and no other thread running yet."""
    return hasattr(os, "fork") and sys.platform.startswith(FORK_PLATFORMS) and threading.active_count() == 1
