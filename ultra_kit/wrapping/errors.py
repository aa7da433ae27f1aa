"""What a tool's exception becomes for its caller: a user's mistake its message, a crash its type and message
with the traceback logged; secrets redacted from both."""

from __future__ import annotations

import logging
import os
import traceback
from collections.abc import Callable

from ultra_base import redact
from ultra_base.errors import InputError
from ultra_kit import lifeline

log = logging.getLogger("ultra.server")


def user_error_message(exc: BaseException) -> str | None:
    """The message for an exception that is the user's mistake (bad input, missing file), else None."""
    if isinstance(exc, InputError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"{exc.filename}: file not found; check the path"
    if isinstance(exc, PermissionError):
        return f"{exc.filename}: permission denied"
    return None


def _no_reason(exc: BaseException) -> str:
    """What the caller reads for an error raised without a message (a bug: every error says why)."""
    return f"{type(exc).__name__} raised without a message (a bug in the tool: please report it)"


class ToolCrash(RuntimeError):
    """A tool's unexpected exception in-process: its message with secrets redacted (the traceback is logged)."""


def in_process_crash(type_name: str, message: str) -> Exception:
    """``crash_as`` in-process: a ``ToolCrash`` saying ``unexpected error: <Type>: <message>``, as a server does
    (docs/pipelines.md), so ``ultra call`` shows the same words as an MCP client."""
    return ToolCrash(f"unexpected error: {type_name}: {message}" if message else f"unexpected error: {type_name}")


def crash_report(raise_as: Callable[[str], Exception]) -> Callable[[str, str], Exception]:
    """``crash_as`` for a server: the crash's type and message, and where its traceback is."""

    def report(type_name: str, message: str) -> Exception:
        text = f"{type_name}: {message}" if message else type_name
        return raise_as(f"unexpected error: {text} (traceback in {lifeline.log_location()})")

    return report


class ToolErrors:
    """Context manager mapping a user's mistakes to ``raise_as(message)`` and crashes to ``crash_as(message)``."""

    def __init__(
        self, tool_name: str, raise_as: Callable[[str], Exception], crash_as: Callable[[str, str], Exception]
    ) -> None:
        self.tool_name = tool_name
        self.raise_as = raise_as
        self.crash_as = crash_as

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        if exc is None or not isinstance(exc, Exception):
            return False
        if isinstance(self.raise_as, type) and isinstance(exc, self.raise_as):
            text = str(exc)
            if text.strip() and redact.redact_text(text) == text:
                return False
            raise self.raise_as(redact.redact_text(text) if text.strip() else _no_reason(exc)) from None
        message = user_error_message(exc)
        if message is not None:
            message = message if message.strip() else _no_reason(exc)
            message = redact.redact_text(message)
            if isinstance(exc, InputError):
                log.info("%s: %s", self.tool_name, message)
            raise self.raise_as(message) from None
        trace = redact.redact_text("".join(traceback.format_exception(exc)))
        # the SDK logs through rich in 80 columns: a longer file:line here narrows the message and wraps the traceback
        log.error("%s crashed (pid %d)\n%s", self.tool_name, os.getpid(), trace.rstrip())
        raise self.crash_as(type(exc).__name__, redact.redact_text(str(exc))) from None
