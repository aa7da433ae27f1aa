"""Errors the ``ultra`` client reports to the user as one message, without a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ultra_kit.errors import InputError


class UltraError(Exception):
    """A problem the user can fix: the message says where (file:line) and what to do."""


def located(path: object, line: int | None, message: str) -> UltraError:
    """An UltraError pointing at ``path:line``."""
    where = f"{path}:{line}" if line else f"{path}"
    return UltraError(f"{where}: {message}")


@contextmanager
def as_ultra_error() -> Iterator[None]:
    """An InputError raised in the block (the kit's checks of a file the user gave: ``ultra_kit.yaml_files``)
    becomes an UltraError with the same text."""
    try:
        yield
    except InputError as exc:
        raise UltraError(str(exc)) from None
