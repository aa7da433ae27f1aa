"""Estimate mode (``ultra run --estimate``) as the server kit sees it: where results go and what may be written.

``$ULTRA_LLM_ESTIMATE`` names the ledger file of the run's unsent requests (``ultra_llm.estimate``); its
folder is the estimate's scratch folder, removed when the estimate ends. While it is set:

- ``result_path`` puts every tool's result file in ``<scratch>/results`` (the run leaves no result behind);
- a tool call that was handed stand-in replies (``note_standin``: an unsent request answered by another
  cached answer or a placeholder) may not write outside the scratch folder (``check_estimate_write``):
  the files a setting names (a synthetic test set, say) never receive data an LLM did not give.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ultra_kit.errors import InputError

ESTIMATE_ENV = "ULTRA_LLM_ESTIMATE"
_call_standins: ContextVar[list[int] | None] = ContextVar("call_standins", default=None)


def ledger_path() -> str:
    """The ledger file of estimate mode, or "" when tools run as usual."""
    return os.environ.get(ESTIMATE_ENV, "").strip()


def scratch_folder() -> Path | None:
    """The estimate's scratch folder (the ledger's folder), or None outside estimate mode."""
    ledger = ledger_path()
    return Path(ledger).resolve().parent if ledger else None


@contextmanager
def counting_standins() -> Iterator[None]:
    """Count the stand-in replies handed out inside the block (one tool call; tasks it starts share the count)."""
    token = _call_standins.set([0])
    try:
        yield
    finally:
        _call_standins.reset(token)


def note_standin() -> None:
    """Record that the current tool call was handed a stand-in reply."""
    box = _call_standins.get()
    if box is not None:
        box[0] += 1


def standins_in_call() -> int:
    """The stand-in replies the current tool call was handed so far."""
    box = _call_standins.get()
    return box[0] if box is not None else 0


def check_estimate_write(path: Path) -> None:
    """In estimate mode, refuse to write ``path`` outside the scratch folder from a call fed stand-in replies."""
    scratch = scratch_folder()
    if scratch is None or not standins_in_call() or Path(os.path.abspath(path)).is_relative_to(scratch):
        return
    raise InputError(
        "ultra run --estimate does not write files from stand-in replies (no LLM answered this step's "
        "requests): the steps that read this file are estimated after a run has written it",
        path=str(path),
    )
