"""Failures are loud: the ``failed`` summary the tool returns, and the check that fails the step.

Past ``max_failed_fraction`` (or when no item was answered) the step fails, naming the commonest reasons
with an example of each and the result file that holds every record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from typing_extensions import TypedDict

from ultra_base.errors import InputError
from ultra_kit.failures import check_fraction


class FailedSummary(TypedDict):
    """How many items failed of how many, by reason (``http_status``, ``timeout`` ...), and the first error."""

    count: int
    total: int
    reasons: dict[str, int]
    first_error: str | None
    ids: list[str]


def summarise(records: Sequence[dict[str, Any]]) -> FailedSummary:
    failed = [r for r in records if r["status"] != "ok"]
    reasons = Counter(r["reason"] for r in failed)
    first = f"{failed[0]['id']}: {failed[0]['reason']}: {failed[0]['detail']}" if failed else None
    return FailedSummary(count=len(failed), total=len(records), reasons=dict(reasons.most_common()),
                         first_error=first, ids=[r["id"] for r in failed])  # fmt: skip


def check(failed: FailedSummary, records: Sequence[dict[str, Any]], *, max_failed_fraction: float, result: str) -> None:
    """Raise ``InputError`` when more than ``max_failed_fraction`` of the items failed, or all of them."""
    limit = check_fraction(max_failed_fraction)
    count, total = failed["count"], failed["total"]
    if not count or (count < total and count / total <= limit):
        return
    examples = []
    for reason, n in failed["reasons"].items():
        example = next(r for r in records if r["status"] != "ok" and r["reason"] == reason)
        examples.append(f"{reason} {n} (e.g. {example['id']}: {example['detail']})")
    share = f"{count / total:.0%}, more than max_failed_fraction {limit:g}" if count < total else "all of them"
    raise InputError(
        f"target.ask: {count} of {total} items failed ({share}); the commonest reasons: {'; '.join(examples[:3])}. "
        f"Every record is in {result}; run again to ask only the items that failed or are missing"
    )
