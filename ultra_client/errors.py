"""Errors the ``ultra`` client reports to the user as one message, without a traceback."""

from __future__ import annotations


class UltraError(Exception):
    """A problem the user can fix: the message says where (file:line) and what to do."""


def located(path: object, line: int | None, message: str) -> UltraError:
    """An UltraError pointing at ``path:line``."""
    where = f"{path}:{line}" if line else f"{path}"
    return UltraError(f"{where}: {message}")
