"""A server process stops when the process that started it is gone, even in the middle of a tool.

A stdio server normally ends when its stdin closes, but a sync tool running in a worker thread
cannot be cancelled: if the client is killed (SIGKILL, a crash), the server would finish the tool
and write results no run refers to. Two guards, installed when a server starts serving stdio:

- On Linux, when the ``ultra`` client started this process (``ULTRA_PARENT_PID`` equals the
  parent's pid), ``prctl(PR_SET_PDEATHSIG, SIGTERM)``: the kernel sends SIGTERM when the parent
  dies. The kernel ties this to the parent *thread* that forked; the client starts servers from
  its main thread (the one running the event loop), which lives as long as the client does.
- Everywhere, a daemon thread that watches ``os.getppid()``: when it changes, the parent has died
  and the process was re-parented. The thread sends SIGTERM to its own process and, should a
  handler keep the process alive, exits it hard a few seconds later. It works while the main
  thread or a worker is busy, since it needs neither.

SIGTERM and SIGHUP (from a guard, or from the client stopping the server after closing its stdin)
end the process at once after removing the result names a busy tool reserved and the temporary
files it is still filling (``ultra_kit.files.discard_unfinished``), so a stopped server leaves
no empty or half-written result behind; the exit status is 128 + the signal's number.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

from ultra_kit.files import discard_unfinished

PARENT_PID_ENV = "ULTRA_PARENT_PID"
LOG_PATH_ENV = "ULTRA_SERVER_LOG"
POLL_SECONDS = 0.5
GRACE_SECONDS = 3.0
PR_SET_PDEATHSIG = 1


_started = False
_lock = threading.Lock()


def log_location() -> str:
    """Where this server's log is: the file the client named, else its stderr."""
    path = os.environ.get(LOG_PATH_ENV, "")
    return f"the server's log, {path}" if path else "the server's stderr"


def install() -> None:
    """Start the guards (once per process)."""
    global _started
    with _lock:
        if _started:
            return
        _started = True
    if threading.current_thread() is threading.main_thread():  # signal handlers live in the main thread only
        for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if signum is not None:
                signal.signal(signum, _discard_and_exit)
    parent = os.getppid()
    if parent <= 1:  # already orphaned, or started by init: there is no parent to watch
        return
    if sys.platform.startswith("linux") and os.environ.get(PARENT_PID_ENV) == str(parent):
        _set_parent_death_signal(parent)
    threading.Thread(target=_watch_parent, args=(parent,), name="ultra-lifeline", daemon=True).start()


def stop_now() -> None:
    """End this process as SIGTERM does: the busy tool's reserved names and half-written files removed."""
    _discard_and_exit(signal.SIGTERM, None)


def _discard_and_exit(signum: int, frame: object) -> None:
    """Remove the busy tool's reserved names and half-written files, then exit (its thread cannot be stopped)."""
    with contextlib.suppress(Exception):
        discard_unfinished()
    os._exit(128 + signum)


def _set_parent_death_signal(parent: int) -> bool:
    """``prctl(PR_SET_PDEATHSIG, SIGTERM)``; True if set. A parent gone before the call is caught here too."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent:  # the parent died between fork and prctl: no signal will come
        _stop(parent)
    return True


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    _stop(parent)


def _stop(parent: int) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"[lifeline] parent process {parent} is gone; stopping this server", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(GRACE_SECONDS)
    os._exit(143)
