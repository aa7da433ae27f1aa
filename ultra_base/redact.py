"""Keep the values of ``${VAR}`` references out of everything a process writes, returns or prints.

Every value that ``expand_env`` substitutes is remembered here (process-wide; a server process
serves one client), as are the values of the variables a server is told to treat as secret. A
remembered value is replaced by ``***`` in tool results, error messages, log records and every
file written through ``ultra_kit.files``. Values shorter than ``MIN_LENGTH``, values that name an
existing file or folder (``${HOME}/data``), and values a setting reads as a number of at most
``MAX_SETTING_NUMBER`` characters or as true, false or null (``${MAX_TOKENS}``: 2048, ``${OVERWRITE}``: false;
``setting_value``) are not secrets and are left alone: replacing them would break the paths the next step reads,
or every result that holds them (a ``map`` of 0.12048 would read 0.1***, a ``num_ret`` of 2048 or a ``false``
would not be JSON). A longer number may be an account number or a token.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable
from typing import Any

from ultra_base.environment import SECRET_NAMES_ENV

REDACTED = "***"
MIN_LENGTH = 4
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
MAX_SETTING_NUMBER = 12  # characters: a longer number is kept secret
SETTING_WORDS = ("true", "false", "null", "none")  # in any case

_secrets: set[str] = set()
_ordered: tuple[str, ...] = ()
_lock = threading.Lock()


def remember(value: Any) -> None:
    """Treat ``value`` (an expanded ``${VAR}``) as a secret from now on."""
    global _ordered
    if not isinstance(value, str) or len(value) < MIN_LENGTH or value in _secrets or setting_value(value):
        return
    try:
        if os.path.exists(value):
            return
    except (OSError, ValueError):
        pass
    with _lock:
        _secrets.add(value)
        _ordered = tuple(sorted(_secrets, key=len, reverse=True))
    _install_log_redaction()


def setting_value(value: str) -> bool:
    """Whether ``value`` reads as a setting's number (``2048``, ``0.7``, ``1e-5``: at most ``MAX_SETTING_NUMBER``
    characters) or as true, false or null, white space around it aside."""
    text = value.strip()
    if text.lower() in SETTING_WORDS:
        return True
    return len(text) <= MAX_SETTING_NUMBER and NUMBER.fullmatch(text) is not None


def remember_environment(names: Iterable[str]) -> None:
    """Remember the values of the environment variables ``names`` that are set (names alone are no secret)."""
    for name in names:
        if name and name in os.environ:
            remember(os.environ[name])


def secret_names_from_environment() -> set[str]:
    """The variable names listed in ``ULTRA_SECRET_VARS`` (set by the ``ultra`` client)."""
    return {name.strip() for name in os.environ.get(SECRET_NAMES_ENV, "").split(",") if name.strip()}


def active() -> bool:
    """True once any secret is known."""
    return bool(_ordered)


def redact_text(text: str) -> str:
    """``text`` with every known secret replaced by ``***``."""
    for secret in _ordered:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact(value: Any) -> Any:
    """``value`` with secrets replaced in every string inside it (dicts, lists, tuples, pydantic models)."""
    if not _ordered:
        return value
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact(key) if isinstance(key, str) else key: redact(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(redact(item) for item in value)
    dump = getattr(value, "model_dump", None)
    if callable(dump) and hasattr(type(value), "model_validate"):
        try:
            return type(value).model_validate(redact(dump()))
        except Exception:  # noqa: BLE001 - a model that rejects its own redacted dump stays as it is
            return value
    return value


_installed = False


def _install_log_redaction() -> None:
    """Redact every log record of the process once a secret is known (message, arguments, traceback)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if _ordered:
            try:
                message = record.getMessage()
            except Exception:  # noqa: BLE001 - a malformed record is logged as the logging module would
                return record
            cleaned = redact_text(message)
            if cleaned != message:
                record.msg, record.args = cleaned, None
            if record.exc_info and record.exc_info[1] is not None:
                record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return record

    logging.setLogRecordFactory(factory)
