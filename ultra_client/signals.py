"""SIGTERM and SIGHUP stop a command as Ctrl-C does: servers stopped, no partial results, non-zero exit.

They do so even when SIGINT is ignored (a command started in the background by a script, or under
``nohup``), and the caller exits at once even if an in-process tool's thread is still busy
(``StoppedBySignal`` is caught by ``ultra_client.cli``, which ends the process).
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class StoppedBySignal(SystemExit):
    """The command was stopped by SIGTERM or SIGHUP; ``code`` is 128 + the signal's number."""


@contextlib.contextmanager
def stop_like_interrupt(outcome: str = "the servers were stopped and the run did not finish") -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP act as SIGINT, so the event loop cancels the command and its
    servers are stopped as on Ctrl-C; leaving by such a signal raises StoppedBySignal (exit status
    128 + its number), after the line ``stopped by SIGTERM: <outcome>``.

    A second signal interrupts at once, as a second Ctrl-C does. Outside the main thread (no
    signal handlers there) nothing changes.
    """
    received: list[int] = []

    def interrupt(signum: int, frame: object) -> None:
        received.append(signum)
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):  # asyncio's (it cancels the main task) or Python's default handler
            on_sigint(signal.SIGINT, frame)
        else:  # SIGINT ignored (started in the background) or left to the system: stop all the same
            raise KeyboardInterrupt

    previous = {}
    for signum in STOP_SIGNALS:
        try:
            previous[signum] = signal.signal(signum, interrupt)
        except (ValueError, OSError):  # not the main thread
            break
    try:
        yield
    except KeyboardInterrupt:
        if not received:
            raise
        name = signal.Signals(received[0]).name
        with contextlib.suppress(OSError, ValueError):
            print(f"stopped by {name}: {outcome}", file=sys.stderr)
        raise StoppedBySignal(128 + received[0]) from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
