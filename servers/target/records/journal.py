"""The journal of a run: each item's record appended as its answer arrives, so that a run killed at any point
(SIGKILL included) and started again asks only the items it does not have.

The journal is ``<save folder>/.resume/ask_<fingerprint>.jsonl``; the fingerprint hashes the target (less the
runner's knobs) and the items, so another target or other questions start afresh. Records are written in
batches, one ``write`` in append mode each: at most ``FLUSH_SECONDS`` after an answer arrives (or sooner, every
``FLUSH_LINES`` records) its line is in the file, so a kill (SIGKILL included) loses at most the answers of the
last ``FLUSH_SECONDS``, which the next start asks again. The file is then ``fsync``-ed in a worker thread (one
at a time; a batch written during one is synced ``FLUSH_SECONDS`` after it ends), so the lines survive a crash
of the machine too, that much later. A line cut by a kill is ignored. Failed
items are asked again. The journal is removed when a run completes; it is not a cache across runs
(``target_cache`` is).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from servers.target import fastjson
from ultra_base import redact
from ultra_base.file_limits import loads_limited
from ultra_base.line_limits import bounded_lines

FLUSH_SECONDS = 0.2  # an answer's line reaches the file at most this long after it arrives
FLUSH_LINES = 256  # ... or as soon as this many lines wait
RUNNER_KEYS = ("timeout", "max_workers", "rate_limit", "max_retries", "max_failed_fraction", "target_cache")


def identity_of(target: Mapping[str, Any], *, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """The target less the runner's knobs (and ``leave_out``), the values of ``${VAR}`` references as ``***``: a
    hash written to a file name or a cache must not carry a secret, even hashed."""
    return redact.redact({k: v for k, v in target.items() if k not in RUNNER_KEYS and k not in leave_out})


def fingerprint(target: Mapping[str, Any], items: list[dict[str, Any]]) -> str:
    """SHA-256 of the target's identity and the items as asked (question, id, conversation, reference)."""
    identity = identity_of(target)
    text = json.dumps({"target": identity, "items": items}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Journal:
    """Append-only records of one run, read back on the next start."""

    def __init__(self, folder: Path, key: str) -> None:
        self.path = folder / ".resume" / f"ask_{key[:20]}.jsonl"
        self._fd: int | None = None
        self._pending: list[bytes] = []
        self._timer: asyncio.TimerHandle | None = None
        self._syncing: Any = None  # the fsync in flight (a future), at most one
        self._unsynced = False  # lines written since the last fsync began

    def completed(self) -> dict[str, dict[str, Any]]:
        """The records of items already answered (status ok), by id; cut or unreadable lines skipped."""
        done: dict[str, dict[str, Any]] = {}
        if not self.path.is_file():
            return done
        for line in _short_lines(self.path):
            try:
                record = loads_limited(line, path=str(self.path))
            except ValueError:  # cut, malformed or too deep
                continue
            if isinstance(record, dict) and record.get("status") == "ok" and "id" in record:
                done[str(record["id"])] = record
        return done

    def append(self, record: dict[str, Any]) -> bytes:
        """Queue ``record``'s line (written within ``FLUSH_SECONDS``); the line, which the result file reuses."""
        line = fastjson.dumps(record) + b"\n"
        self._pending.append(line)
        if len(self._pending) >= FLUSH_LINES:
            self.flush()
        elif self._timer is None:
            try:
                self._timer = asyncio.get_running_loop().call_later(FLUSH_SECONDS, self.flush)
            except RuntimeError:  # no event loop: write now
                self.flush()
        return line

    def flush(self) -> None:
        """Write the waiting lines in one ``write`` (never interleaved: one writer, append mode), then have the
        file ``fsync``-ed in a worker thread; while one is at it, the next is due ``FLUSH_SECONDS`` later."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            data = b"".join(self._pending)
            self._pending.clear()
            while data:
                data = data[os.write(self._fd, data) :]
            self._unsynced = True
        if not self._unsynced or self._fd is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop: here and now
            self._unsynced = False
            return _fsync_copy(os.dup(self._fd))
        if self._syncing is None or self._syncing.done():
            self._unsynced = False
            self._syncing = loop.run_in_executor(None, _fsync_copy, os.dup(self._fd))
        else:
            self._timer = loop.call_later(FLUSH_SECONDS, self.flush)

    def close(self, *, finished: bool) -> None:
        """Write what waits and close the file; remove it when the run finished (its records are in the result
        file)."""
        if not finished:
            self.flush()
            if self._fd is not None:
                _fsync_copy(os.dup(self._fd))
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if finished:
            self.path.unlink(missing_ok=True)


def _fsync_copy(fd: int) -> None:
    """``fsync`` a duplicate of the journal's descriptor and close it (the journal may close its own meanwhile)."""
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _short_lines(path: Path) -> Iterator[str]:
    """The lines of ``path`` (undecodable bytes replaced), read one at a time; a line longer than ``MAX_LINE_CHARS``
    bytes (damage: a line ultra writes is one record) is skipped, read in pieces of that size, never held whole."""
    with open(path, "rb") as handle:
        for raw in bounded_lines(handle, path, skip_long=True):
            yield raw.decode("utf-8", errors="replace")
