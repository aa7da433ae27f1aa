"""Items a system under test failed to answer: ``pred_ls`` holds None for them (``target.ask``).

A failed item is never scored. The evaluation tools leave it out and list its id in
``settings.failed_items``; the judges keep it in ``items`` with the status ``UNANSWERED`` (no request,
counted in ``counts`` and ``aggregate.num_excluded``, never in ``failed``, which counts the judge's own
failures). Every list aligned with ``pred_ls`` is cut the same way, so ids stay with their items.
"""

from __future__ import annotations

from typing import Any

from ultra_base.errors import InputError

UNANSWERED = "unanswered"  # a judge item's status: the system under test gave no answer (pred_ls None)


def answered_items(pred_ls: list[Any], **aligned: list[Any] | None) -> tuple[list[Any], dict[str, Any], list[Any]]:
    """The items a system answered: ``pred_ls`` without its None entries, the ``aligned`` lists cut the same
    way, and the ids (``aligned["id_ls"]``, or positions) of the items left out. When some item failed the
    cut ``id_ls`` is always a list (the positions when none was given), so the items kept keep their own ids.

    An aligned list of another length than ``pred_ls`` cannot be cut safely: it is an error naming it when
    some item failed (the tool's own check names it otherwise).
    """
    if not isinstance(pred_ls, list) or all(p is not None for p in pred_ls):
        return pred_ls, dict(aligned), []
    for name, values in aligned.items():
        if isinstance(values, list) and len(values) != len(pred_ls):
            raise InputError(f"{name} has {len(values)} items but pred_ls has {len(pred_ls)}: give one per item")
    kept = [i for i, p in enumerate(pred_ls) if p is not None]
    if aligned.get("id_ls") is None:  # positions, so the items kept keep their own (not 0..kept-1)
        aligned = {**aligned, "id_ls": list(range(len(pred_ls)))}
    ids = aligned["id_ls"]
    failed = [ids[i] for i, p in enumerate(pred_ls) if p is None]
    cut = {name: [values[i] for i in kept] if isinstance(values, list) else values for name, values in aligned.items()}
    return [pred_ls[i] for i in kept], cut, failed
