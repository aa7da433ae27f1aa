"""What an endpoint's failure says: the server's own message, how long it asks us to wait, and why a
connection never got an answer (refused, unresolvable, dropped by the server, or a real time-out)."""

from __future__ import annotations

import email.utils
import errno
import logging
import re
import socket
import time
import urllib.parse
from typing import Any

log = logging.getLogger("ultra.llm")

MAX_RETRY_AFTER = 120.0
# A connection the server closed (or reset) before it replied: the OS's errors, then aiohttp's and httpx's by name.
DROPPED = (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)
DROPPED_NAMES = ("ServerDisconnectedError", "ClientConnectionResetError", "RemoteProtocolError", "ReadError")


def connection_failure(exc: Any, base_url: str, timeout: float, started: float | None = None) -> str:
    """Why a request never got an answer: refused, unresolvable host, dropped, other connect error, or time-out.

    The transport wraps the cause (``ConnectionRefusedError`` inside aiohttp's ``ClientConnectorError``
    inside httpx's ``ConnectTimeout`` inside openai's ``APITimeoutError``, for a refusal, a DNS failure
    and a dropped connection alike): the chain is searched, so a refusal after 0.01 s is not reported as a
    time-out. ``started`` (``time.monotonic()`` when the request began) gives the elapsed time: a time-out
    is one only when the chain holds a ``TimeoutError`` or the request took about ``timeout`` seconds.
    """
    where = host_port(base_url)
    elapsed = time.monotonic() - started if started is not None else None
    after = f" (after {elapsed:.1f} s)" if elapsed is not None else ""
    chain = _causes(exc)
    for cause in chain:
        if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == errno.ECONNREFUSED:
            return f"connection refused to {where}"
        if type(cause).__name__ == "ClientConnectorDNSError" or isinstance(cause, socket.gaierror):
            return f"cannot resolve the host of {where}"
    if any(isinstance(cause, TimeoutError) for cause in chain):
        return f"timed out after {timeout:g} s"
    for cause in chain:
        if isinstance(cause, DROPPED) or type(cause).__name__ in DROPPED_NAMES:
            return f"{where} closed the connection without a reply{after}"
        if any(kind.__name__ == "ClientConnectorError" for kind in type(cause).__mro__):  # also TLS failures
            return f"cannot connect to {where}: {getattr(cause, 'os_error', None) or cause}"
    waited = elapsed >= 0.9 * timeout if elapsed is not None else type(exc).__name__ == "APITimeoutError"
    return f"timed out after {timeout:g} s" if waited else f"connection error{after}: {chain[-1]}"


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or during, outermost first (cycles cut)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def host_port(base_url: str) -> str:
    """``host:port`` of ``base_url`` (never its path, query or credentials)."""
    parts = urllib.parse.urlsplit(base_url)
    try:
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:
        port = None
    host = parts.hostname or "?"
    return f"{host}:{port}" if port else host


def server_message(exc: Any) -> str:
    """The error message the server sent (OpenAI error shape or plain text)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return str(getattr(exc, "message", exc))


def retry_after(response: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), capped."""
    headers = getattr(response, "headers", None) or {}
    try:
        if headers.get("retry-after-ms"):
            return min(float(headers["retry-after-ms"]) / 1000.0, MAX_RETRY_AFTER)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            seconds = float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            seconds = when.timestamp() - time.time()
        return min(max(seconds, 0.0), MAX_RETRY_AFTER)
    except (TypeError, ValueError, OverflowError):
        return None


def rejected_param(exc: Any, kwargs: dict[str, Any], optional: tuple[str, ...], dropped: set[str]) -> str | None:
    """The optional parameter a 400/422 complains about, added to ``dropped`` so it is left out from now on."""
    if exc.status_code not in (400, 422):
        return None
    message = server_message(exc)
    for name in optional:
        if name in kwargs and re.search(rf"\b{name}\b", message):
            if name not in dropped:
                log.warning("the endpoint rejects '%s'; sending requests without it (%s)", name, message[:200])
                dropped.add(name)
            return name
    return None
