"""Hooks on what the project writes, so that a library can add to every file write without the writer importing it.

The server kit's writer (``ultra_kit.files``) runs ``check_write(path)`` before every atomic write, puts result
files in ``estimate_scratch()`` when there is one, and enters ``tool_call()`` around every tool call. A library
registers with ``on_write`` when it is imported: ``ultra_llm.estimate`` (estimate mode) adds the check that a tool
call fed stand-in replies writes no file a setting names, and counts those replies with ``note`` / ``noted`` in the
notes of the call under way. The kit never imports the library: a check exists once its library is loaded, which
is also the only way the events it checks for can happen in the process.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ultra_base.environment import ESTIMATE_ENV

WriteCheck = Callable[[Path], None]  # raises (an InputError) to refuse writing the path

_checks: list[WriteCheck] = []
_notes: ContextVar[Counter[str] | None] = ContextVar("tool_call_notes", default=None)


def on_write(check: WriteCheck) -> WriteCheck:
    """Run ``check(path)`` before every file the writer writes from now on (registered once; usable as a decorator)."""
    if check not in _checks:
        _checks.append(check)
    return check


def check_write(path: Path) -> None:
    """Run every registered check on ``path`` (the writer calls this before it writes)."""
    for check in tuple(_checks):
        check(path)


@contextmanager
def tool_call() -> Iterator[None]:
    """One tool call: ``note`` counts inside the block belong to it (tasks and threads started with its context
    share them); outside a call nothing is counted."""
    token = _notes.set(Counter())
    try:
        yield
    finally:
        _notes.reset(token)


def note(event: str) -> None:
    """Count one ``event`` in the tool call under way."""
    notes = _notes.get()
    if notes is not None:
        notes[event] += 1


def noted(event: str) -> int:
    """How many ``event``s the tool call under way has counted so far (0 outside a call)."""
    notes = _notes.get()
    return notes[event] if notes is not None else 0


def estimate_scratch() -> Path | None:
    """The scratch folder of ``ultra run --estimate`` (its ledger's folder, ``$ULTRA_LLM_ESTIMATE``), where result
    files go instead; None outside estimate mode."""
    ledger = os.environ.get(ESTIMATE_ENV, "").strip()
    return Path(ledger).resolve().parent if ledger else None
