"""The numbers in trec_eval's measure parameters (``P.5``, ``iprec_at_recall..5``, ``set_F.0.5``,
``ndcg.1=3``), read as its C code reads them, and refused where it would silently read another number.

trec_eval 10.0 reads cutoffs and grades with C's ``atol`` and every other number with ``atof``
(``meas_init.c``, ``gain_init.c``): each reads the longest number at the start of the text, ignores the
rest, and gives 0 when there is none (``abc``, the empty text between two commas). A text that is a
whole C number is read here as C reads it, hexadecimal floats (``0x1p-1``) and ``inf``/``nan``
included; a text C reads only in part (``0.5x``, ``1.5`` as a cutoff) or not at all (``abc``) is refused
with the number trec_eval would have used, since a typo would otherwise be scored as another parameter.
Python's own ``int``/``float`` will not do: they read ``1_0`` as 10, where C reads 1.
"""

from __future__ import annotations

import re

from ultra_base.errors import InputError

_SPACE = "[ \t\n\v\f\r]*"  # C's isspace, which atol and atof skip before the number
_C_LONG = re.compile(_SPACE + r"[+-]?[0-9]+")
_C_DOUBLE = re.compile(
    _SPACE + r"[+-]?(?:0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|inf(?:inity)?|nan(?:\([0-9a-z_]*\))?)",
    re.IGNORECASE,
)
_REST = re.compile(_SPACE)  # what may follow a whole number


def c_long(text: str) -> tuple[int, bool]:
    """(what C's ``atol`` reads from ``text``, whether that is all of it but surrounding spaces)."""
    read = _C_LONG.match(text)
    if read is None:
        return 0, False
    return int(read.group()), _REST.fullmatch(text, read.end()) is not None


def c_double(text: str) -> tuple[float, bool]:
    """(what C's ``atof`` reads from ``text``, whether that is all of it but surrounding spaces)."""
    read = _C_DOUBLE.match(text)
    if read is None:
        return 0.0, False
    number = read.group().strip(" \t\n\v\f\r")
    digits = number.lstrip("+-")
    if digits[:2].lower() == "0x":
        value = float.fromhex(number)
    elif digits[:3].lower() == "nan":
        value = float(number[: number.lower().index("nan") + 3])  # nan(chars): the chars only pick a payload
    else:
        value = float(number)
    return value, _REST.fullmatch(text, read.end()) is not None


def misread(text: str, value: float) -> str:
    """The end of a refusal: what trec_eval would have read ``text`` as, and why it is refused here."""
    shown = f"{value:g}"
    return (
        f"trec_eval would silently read {text!r} as {shown} (C reads only the number at its start, 0 if "
        f"there is none), so a typo would be scored as another parameter: write {shown} if that is what you mean"
    )


def parameter_number(text: str, where: str) -> float:
    """One ``atof`` number of a measure's parameters (``.5`` of ``iprec_at_recall..5``, ``3`` of ``ndcg.1=3``)."""
    value, whole = c_double(text)
    if not whole:
        raise InputError(f"{where}: {text!r} is not a number (e.g. 0.5); {misread(text, value)}")
    return value


def rank_cutoff(part: str, where: str) -> int:
    """One rank cutoff of a measure's parameters (the ``10`` of ``P.5,10``): a positive whole number.

    trec_eval reads it with C's ``atol`` (``1.5`` is 1, ``12abc`` 12, ``1e3`` 1, ``abc`` 0) and stops
    with "Negative cutoff detected" when a cutoff is 0 or less; anything but a whole number is refused
    here rather than silently cut short. ``where`` names the measure in the message."""
    value, whole = c_long(part)
    if not whole and _C_LONG.match(part) is None:
        raise InputError(
            f"{where}: cutoff {part!r} is not a number; cutoffs must be positive integers (e.g. 5) "
            '(trec_eval reads it as 0 and stops: "Negative cutoff detected")'
        )
    if not whole:
        raise InputError(
            f"{where}: cutoff {part!r} is not a whole number; cutoffs must be positive integers "
            f"(trec_eval would silently read it as {value}: write that if it is what you mean)"
        )
    if value <= 0:
        raise InputError(
            f"{where}: cutoff {part.strip()} is not positive; cutoffs must be positive integers (k >= 1) "
            '(trec_eval stops too: "Negative cutoff detected")'
        )
    return value
