"""A count of a mapping setting (``max_workers``, ``max_retries``, a pool endpoint's ``max_concurrency``) written as
one ``${VAR}``: read from the environment as a whole number, and shown by its reference, never by its value.

``${VAR}`` expands to text. A count key written ``max_workers: ${WORKERS}`` whose variable holds a whole number
(``8``, `` 16 ``, ``-1``) becomes that number, a ``VariableCount``: an int that every message, record and ``repr``
show as ``${WORKERS}``, so the value stays out of errors, logs and results as every ``${VAR}`` value does. A
variable holding anything else (``1.5``, ``true``, ``eight``, a key) leaves the key as written, ``${WORKERS}``, and
the count's check refuses it by that name. A count written as a literal string (``"3"``) is not read as a number.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import Any

from ultra_base.errors import InputError, shown

COUNT_KEYS = frozenset({"max_workers", "max_retries", "max_concurrency"})
ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # a ${VAR} reference
_WHOLE = re.compile(r"\s*[+-]?[0-9]{1,18}\s*")
STAND_IN = "unset-during-estimate"  # the text of an unset ${VAR} under ``ultra run --estimate`` (never sent)


class VariableCount(int):
    """A whole number read from a ``${VAR}`` (or computed from one): formatted, printed and recorded as ``shown``."""

    shown: str

    def __new__(cls, value: int, shown: str) -> VariableCount:
        number = super().__new__(cls, value)
        number.shown = shown
        return number

    def __reduce__(self) -> tuple[Any, ...]:  # copies (dataclasses.asdict) and pickles keep the reference
        return VariableCount, (int(self), self.shown)

    def __repr__(self) -> str:
        return self.shown

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return self.shown


def reference(value: Any) -> str | None:
    """The variable's name when ``value`` is exactly one ``${VAR}`` reference (a count written that way)."""
    match = ENV_REFERENCE.fullmatch(value) if isinstance(value, str) else None
    return match.group(1) if match else None


def count_from(value: str, environ: Mapping[str, str]) -> VariableCount | None:
    """``value`` (one ``${VAR}``) as the whole number its set variable holds; None if it holds anything else."""
    name = reference(value)
    text = environ.get(name) if name else None
    number = None if text is None else whole_number(text)
    return None if number is None else VariableCount(number, f"${{{name}}}")


def what_it_holds(name: str, environ: Mapping[str, str]) -> str:
    """How a refusal of ``${name}``'s text ends, never showing the text: it holds something else, or (under
    ``--estimate``, which stands in text for an unset variable) it is not set."""
    if environ.get(name) == STAND_IN:
        return f"it is not set, and an estimate stands in only for text (a key, a URL); export {name}=... first"
    return "it holds something else (not shown)"


def whole_count(value: Any, what: str, *, at_least: str = "") -> int:
    """``value`` (a limit as given: read from a file or sent to a tool) as a whole number: an int as it is (a
    ``VariableCount`` keeps its name), a float without a fraction (``4.0``) as that int. InputError naming ``what``
    (and ``at_least``, the bound its message states, e.g. `` >= 1``) for anything else: a ``${VAR}`` left as written
    because it holds no whole number (named by its reference, never its value), a bool (``true`` is not 1), a float
    with a fraction, a string (``"3"``)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if name := reference(value):
        raise InputError(f"{what} {value} must hold a whole number{at_least}; {what_it_holds(name, os.environ)}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{what} must be a whole number{at_least}, got {shown(value)}")
    return value


def whole_number(text: str) -> int | None:
    """``text`` (a variable's) as a whole number (``8``, `` 16 ``, ``-1``: at most 18 digits), or None."""
    return int(text) if _WHOLE.fullmatch(text) else None


def total(counts: list[int]) -> int:
    """The sum of ``counts``; with a ``VariableCount`` among them, a ``VariableCount`` shown as the sum written out
    (``${GPU1} + 16``): the total would tell the variable's value."""
    whole = sum(counts)
    hidden = any(isinstance(count, VariableCount) for count in counts)
    return VariableCount(whole, " + ".join(str(count) for count in counts)) if hidden else whole


def recorded(value: Any) -> Any:
    """``value`` as a result records it: a ``VariableCount`` by its reference (``"${WORKERS}"``), else as is."""
    return value.shown if isinstance(value, VariableCount) else value


def as_written(value: Any) -> Any:
    """``value`` (lists and dicts too) with each ``VariableCount`` put back as its ``${VAR}``: what one process sends
    another, which reads the variable itself (over JSON the count would arrive as a bare number, its name lost)."""
    if isinstance(value, dict):
        return {key: as_written(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_written(item) for item in value]
    return recorded(value)
