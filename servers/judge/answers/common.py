"""Helpers shared by the answer judges (the modules of ``answers/judges/``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from servers.judge.common.asking import Answer

# A sentence runs to . ! or ? (with the citation markers right after it) followed by a space or the end.
SENTENCE = re.compile(r"\S.*?(?:[.!?]+(?:\s*\[\d+(?:\s*,\s*\d+)*\])*(?=\s|$)|$)", re.DOTALL)


def status_fields(answer: Answer) -> dict[str, Any]:
    """An item's status, request count and cache flag; the error and raw reply when it failed."""
    data: dict[str, Any] = {"status": answer.status, "requests": answer.requests, "cached": answer.cached}
    if answer.status != "ok":
        data.update(error=answer.error, raw=answer.raw)
    return data


def numbered(items: Sequence[str]) -> str:
    """``1. first`` / ``2. second`` lines, or ``(none)``."""
    return "\n".join(f"{i}. {text}" for i, text in enumerate(items, start=1)) or "(none)"
