"""A persistent, content-addressed cache of LLM answers in SQLite, committed one answer at a time.

The key is a SHA-256 of (model_id, messages, sampling parameters, prompt version): the model and the
request, not the endpoint, so an answer does not depend on which endpoint of a pool, which batch or
which imported file brought it. A re-run of the same evaluation sends no request, and a run killed
midway loses nothing already answered. Only successful answers are stored; the API key is never part of a key or a row.
A reply an online request stored that proved unreadable is not final: a later run asks for it again
(``ultra_llm.asking``); answers from batches and imported files (``via``) are.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_base.environment import ESTIMATE_ENV
from ultra_base.errors import InputError, readable_path
from ultra_base.file_limits import loads_limited

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    model_id TEXT NOT NULL,
    prompt TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    reasoning TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
)
"""


_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False)  # one encoder: ~µs saved per key


def encode(value: Any) -> str:
    """The canonical JSON text of ``value`` (sorted keys, UTF-8 as is): what keys are hashed from."""
    return _CANONICAL.encode(value)


def cache_key(
    *,
    model_id: str,
    messages: list[dict[str, Any]] | None = None,
    sampling: dict[str, Any],
    prompt_version: str,
    messages_json: str | None = None,
) -> str:
    """The content address of one request (never includes credentials or the endpoint).

    It is the SHA-256 of ``encode({"messages", "model_id", "prompt_version", "sampling"})``, assembled
    from ``messages_json`` (``encode(messages)``) when the caller has it: a batch pass writes the same
    text into its request line, so the messages are encoded once.
    """
    if messages_json is None:
        messages_json = encode(messages)
    text = (
        f'{{"messages": {messages_json}, "model_id": {encode(model_id)}, '
        f'"prompt_version": {encode(prompt_version)}, "sampling": {encode(sampling)}}}'
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    """One stored answer with the tokens its original request cost."""

    text: str
    reasoning: str | None
    prompt_tokens: int
    completion_tokens: int


class AnswerCache:
    """SQLite-backed answer store; safe to share between threads and processes (WAL mode)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._db = self._open()
        self._lock = threading.Lock()

    def _open(self) -> sqlite3.Connection:
        """The connection, the cache made if missing; a file that is not SQLite is an InputError."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            # NORMAL keeps every committed answer across a killed process (not across a power cut).
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(SCHEMA)
            return db
        except sqlite3.DatabaseError as exc:
            raise InputError(
                f"cannot open the answer cache as SQLite ({exc}); delete the file or set another cache path",
                path=str(self.path),
            ) from None

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer for ``key``, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT text, reasoning, prompt_tokens, completion_tokens FROM answers WHERE key = ?", (key,)
            ).fetchone()
        return CachedAnswer(*row) if row else None

    def via(self, key: str) -> str | None:
        """Where the stored answer for ``key`` came from: ``batch``, an imported file's name, or None (online)."""
        with self._lock:
            row = self._db.execute("SELECT request FROM answers WHERE key = ?", (key,)).fetchone()
        return loads_limited(row[0], path=str(self.path)).get("via") if row else None

    def put(self, key: str, *, model_id: str, prompt: str, request: dict[str, Any], answer: CachedAnswer) -> None:
        """Store one answer and commit it at once; a full disk is an InputError (the cache stays as it was)."""
        try:
            self._insert(key, model_id=model_id, prompt=prompt, request=request, answer=answer)
        except sqlite3.OperationalError as exc:
            if "full" not in str(exc).lower() and getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_FULL:
                raise
            # SQLite rolled the insert back: every answer stored before is still there.
            raise InputError(f"no space left on device writing {self.path} (the answer cache)") from None

    def _insert(self, key: str, *, model_id: str, prompt: str, request: dict[str, Any], answer: CachedAnswer) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    model_id,
                    prompt,
                    json.dumps(request, ensure_ascii=False, sort_keys=True),
                    answer.text,
                    answer.reasoning,
                    answer.prompt_tokens,
                    answer.completion_tokens,
                    time.time(),
                ),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        """Close the connection (answers are already committed)."""
        with self._lock:
            self._db.close()


class NoCache:
    """The cache used when caching is switched off (an empty cache path)."""

    path = None

    def get(self, key: str) -> CachedAnswer | None:
        return None

    def via(self, key: str) -> str | None:
        return None

    def put(self, key: str, **_: Any) -> None:
        return None

    def __len__(self) -> int:
        return 0

    def close(self) -> None:
        return None


@contextmanager
def read_only(path: str | os.PathLike[str]) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the answer cache at ``path`` (``ultra run --estimate`` reads it, never writes)."""
    db = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True, timeout=5)
    try:
        yield db
    finally:
        db.close()


class ReadOnlyCache(AnswerCache):
    """The answer cache as ``ultra run --estimate`` uses it: read, never created or written."""

    def _open(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(f"file:{self.path.resolve()}?mode=ro", uri=True, timeout=30, check_same_thread=False)
            db.execute("SELECT 1 FROM answers LIMIT 1")
            return db
        except sqlite3.DatabaseError as exc:
            raise InputError(
                f"cannot read the answer cache as SQLite ({exc}); delete the file or set another cache path",
                path=str(self.path),
            ) from None

    def put(self, key: str, **_: Any) -> None:
        return None


class EmptyCache(ReadOnlyCache):
    """A cache with no answers, in memory: what ``--estimate`` reads where no cache file exists yet (none is made)."""

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute(SCHEMA)
        return db


def open_cache(path: str | os.PathLike[str] | None) -> AnswerCache | NoCache:
    """The cache at ``path``, or a no-op cache when ``path`` is empty or None; a tool opens (reads and
    writes) a cache only inside the read roots (``ultra_base.errors.readable_path``). Under
    ``ultra run --estimate`` an existing cache is only read and a missing one is not created."""
    if not path:
        return NoCache()
    path = readable_path(path, setting="the answer cache file")
    if os.environ.get(ESTIMATE_ENV, "").strip():
        return ReadOnlyCache(path) if Path(path).expanduser().is_file() else EmptyCache(path)
    return AnswerCache(path)
