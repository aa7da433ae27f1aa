"""Endpoints that fail the ways a network does, on 127.0.0.1, for the tests of ``ultra_llm.endpoint_errors``.

- ``BrokenServer("close")`` accepts each connection and closes it at once (a proxy that drops it);
- ``BrokenServer("drop")`` reads the request, then closes without a reply (a server that crashed mid-request);
- ``BrokenServer("silent")`` reads the request and never replies (a real time-out; closed when the server stops);
- ``free_port()`` (tests/support/ports.py) is a port nothing listens on (a refused connection);
- ``UNRESOLVABLE`` is a host no resolver knows (``.invalid`` is reserved by RFC 2606).
"""

from __future__ import annotations

import contextlib
import socket
import threading

UNRESOLVABLE = "nonexistent.invalid"
MODES = ("close", "drop", "silent")


class BrokenServer:
    """A TCP server on a free port of 127.0.0.1 that fails every connection as ``mode`` says (see the module)."""

    def __init__(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; known: {MODES}")
        self.mode = mode
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)  # accept() wakes up to see the stop flag
        self.port = self._listener.getsockname()[1]
        self._held: list[socket.socket] = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"broken-{mode}", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> BrokenServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopped.set()
        self._listener.close()
        for connection in self._held:
            connection.close()
        self._thread.join(timeout=5)

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            if self.mode != "close":
                connection.settimeout(2)
                with contextlib.suppress(OSError):
                    connection.recv(65536)  # the request's head (and body, for a small one)
            if self.mode == "silent":
                self._held.append(connection)
            else:
                connection.close()
