"""Errors the ``ultra`` client reports to the user as one message, without a traceback."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ultra_base.errors import InputError


class UltraError(Exception):
    """A problem the user can fix: the message says where (file:line) and what to do."""

    exit_code = 1  # the status ``ultra`` exits with (a gate that cannot be evaluated: 2)


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


def did_you_mean(word: str, choices: list[str]) -> str:
    """``; did you mean 'x'?`` for the closest choice, or the list of choices."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.5)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f"; known: {', '.join(sorted(choices))}" if choices else ""


def write_output(path: Path, write: Callable[[Path], object]) -> None:
    """``write(path)``; an OSError becomes an UltraError naming the file."""
    try:
        write(path)
    except OSError as exc:
        raise UltraError(f"{path}: cannot write: {exc.strerror or exc}") from None
