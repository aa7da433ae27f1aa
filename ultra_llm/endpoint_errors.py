"""What an endpoint's failure says: the server's own message, how long it asks us to wait, and why a
connection never got an answer (refused, unresolvable, or a real time-out)."""

from __future__ import annotations

import email.utils
import errno
import socket
import time
import urllib.parse
from typing import Any

MAX_RETRY_AFTER = 120.0


def connection_failure(exc: Any, base_url: str, timeout: float) -> str:
    """Why a request never got an answer: refused, unresolvable host, other connect error, or time-out.

    The transport wraps the cause (``ConnectionRefusedError`` inside aiohttp's ``ClientConnectorError``
    inside httpx's ``ConnectTimeout`` inside openai's ``APITimeoutError``): the chain is searched, so a
    refusal after 0.01 s is not reported as a time-out.
    """
    import openai

    where = host_port(base_url)
    for cause in _causes(exc):
        if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == errno.ECONNREFUSED:
            return f"connection refused to {where}"
        if type(cause).__name__ == "ClientConnectorDNSError" or isinstance(cause, socket.gaierror):
            return f"cannot resolve the host of {where}"
    for cause in _causes(exc):
        if any(kind.__name__ == "ClientConnectorError" for kind in type(cause).__mro__):  # also TLS failures
            os_error = getattr(cause, "os_error", None)
            return f"cannot connect to {where}: {os_error or cause}"
    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {timeout:g} s"
    return f"connection error: {exc.__cause__ or exc}"


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
