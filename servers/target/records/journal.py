"""The journal of a run: each item's record appended as its answer arrives, so that a run killed at any point
(SIGKILL included) and started again asks only the items it does not have.

The journal is ``<save folder>/.resume/ask_<fingerprint>.jsonl``; the fingerprint hashes the target (less the
runner's knobs) and the items, so another target or other questions start afresh. Each record is one
``write`` of one line in append mode; a line cut by a kill is ignored. Failed items are asked again. The
journal is removed when a run completes; it is not a cache across runs (``target_cache`` is).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RUNNER_KEYS = ("timeout", "max_workers", "rate_limit", "max_retries", "max_failed_fraction", "target_cache")


def fingerprint(target: Mapping[str, Any], items: list[dict[str, Any]]) -> str:
    """SHA-256 of the target's identity and the items as asked (question, id, conversation, reference)."""
    identity = {key: value for key, value in target.items() if key not in RUNNER_KEYS}
    text = json.dumps({"target": identity, "items": items}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Journal:
    """Append-only records of one run, read back on the next start."""

    def __init__(self, folder: Path, key: str) -> None:
        self.path = folder / ".resume" / f"ask_{key[:20]}.jsonl"
        self._fd: int | None = None

    def completed(self) -> dict[str, dict[str, Any]]:
        """The records of items already answered (status ok), by id; cut or unreadable lines skipped."""
        done: dict[str, dict[str, Any]] = {}
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return done
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("status") == "ok" and "id" in record:
                done[str(record["id"])] = record
        return done

    def append(self, record: dict[str, Any]) -> None:
        """Write ``record`` as one line, in one ``write`` call (never interleaved, never half-kept)."""
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.write(self._fd, (json.dumps(record, ensure_ascii=False) + "\n").encode())

    def close(self, *, finished: bool) -> None:
        """Close the file; remove it when the run finished (its records are in the result file)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if finished:
            self.path.unlink(missing_ok=True)
