"""When LLM requests fail: the ``failed`` summary a tool returns, and the check that fails the tool.

Used by the judge tools and ``synth.generate_queries``, each with its ``max_failed_fraction`` setting.
A unit (an UMBRELA pair, an answer-judge item, a nuggetize batch, a generated question or list) is
``ok``, failed (``error``: the request failed; ``parse_error``: the reply was unreadable;
``incomplete``: some of its requests failed) or has nothing to judge (``no_sentences``,
``no_statements`` ...). The units with nothing to judge are left out of ``total``. The tool fails
(``InputError``, a tool error for MCP callers) when no unit is ok and some failed, or when failed /
total exceeds ``max_failed_fraction``; it then writes no result file, and the message names the
first error and the counts by kind. Below the limit the result carries ``failed``:

    {"count": 2, "total": 40, "reasons": {"error": 2, "parse_error": 0}, "first_error": "..."}
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from typing_extensions import TypedDict

from ultra_base.errors import InputError

FAILED_STATUSES = ("error", "parse_error", "incomplete")
MAX_ERROR_CHARS = 500


class FailedSummary(TypedDict):
    """How many judged units failed, of how many that needed the LLM, by kind, and the first error's text."""

    count: int
    total: int
    reasons: dict[str, int]
    first_error: str | None


def summarise(units: Iterable[tuple[str, str | None]]) -> tuple[FailedSummary, int]:
    """(the ``failed`` summary, the number of ok units) of ``(status, error text)`` pairs in input order.

    ``reasons`` always has ``error`` and ``parse_error``; ``incomplete`` only when some unit is.
    """
    reasons = {"error": 0, "parse_error": 0}
    ok = total = 0
    first_error: str | None = None
    for status, error in units:
        if status == "ok":
            ok += 1
            total += 1
        elif status in FAILED_STATUSES:
            total += 1
            reasons[status] = reasons.get(status, 0) + 1
            if first_error is None:
                first_error = _short(error or status)
    count = sum(reasons.values())
    return FailedSummary(count=count, total=total, reasons=reasons, first_error=first_error), ok


def check(failed: FailedSummary, ok: int, *, tool: str, noun: str, max_failed_fraction: float) -> None:
    """Raise ``InputError`` when every unit that needed the LLM failed, or more than ``max_failed_fraction``."""
    check_fraction(max_failed_fraction)
    count, total = failed["count"], failed["total"]
    if not count:
        return
    kinds = ", ".join(f"{kind} {n}" for kind, n in failed["reasons"].items() if n)
    if ok == 0:
        raise InputError(f"{tool}: every one of {total} {noun} failed ({kinds}): {failed['first_error']}")
    fraction = count / total
    if fraction > max_failed_fraction:
        raise InputError(
            f"{tool}: {count} of {total} {noun} failed ({fraction:.0%}, more than max_failed_fraction "
            f"{max_failed_fraction:g}; raise max_failed_fraction to accept this) ({kinds}); "
            f"first error: {failed['first_error']}"
        )


def check_fraction(value: Any) -> float:
    """``max_failed_fraction`` checked: a number from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InputError(f"max_failed_fraction must be a number from 0 to 1, got {value!r}")
    return float(value)


def _short(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."
