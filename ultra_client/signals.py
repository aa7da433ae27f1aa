"""SIGTERM and SIGHUP stop a command as Ctrl-C does: servers stopped, no partial results, non-zero exit."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def stop_like_interrupt() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise SIGINT, so the event loop cancels the command and its
    servers are stopped as on Ctrl-C; leaving by such a signal exits with 128 + its number.

    A second signal interrupts at once, as a second Ctrl-C does. Outside the main thread (no
    signal handlers there) nothing changes.
    """
    received: list[int] = []

    def interrupt(signum: int, frame: object) -> None:
        received.append(signum)
        signal.raise_signal(signal.SIGINT)

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
            print(f"stopped by {name}: the servers were stopped and the run did not finish", file=sys.stderr)
        raise SystemExit(128 + received[0]) from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
