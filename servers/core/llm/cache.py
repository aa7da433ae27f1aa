"""A persistent, content-addressed cache of LLM answers in SQLite, committed one answer at a time.

The key is a SHA-256 of (model_id, base_url, messages, sampling parameters, prompt version), so a
re-run of the same evaluation sends no request, and a run killed midway loses nothing already
answered. Only successful answers are stored; the API key is never part of a key or a row.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers.core.errors import InputError

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


def cache_key(
    *, model_id: str, base_url: str, messages: list[dict[str, Any]], sampling: dict[str, Any], prompt_version: str
) -> str:
    """The content address of one request (never includes credentials)."""
    payload = {
        "model_id": model_id,
        "base_url": base_url.rstrip("/"),
        "messages": messages,
        "sampling": sampling,
        "prompt_version": prompt_version,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


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
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL keeps every committed answer across a killed process (not across a power cut).
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(
                f"cannot open the answer cache as SQLite ({exc}); delete the file or set another cache path",
                path=str(path),
            ) from None
        self._lock = threading.Lock()

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer for ``key``, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT text, reasoning, prompt_tokens, completion_tokens FROM answers WHERE key = ?", (key,)
            ).fetchone()
        return CachedAnswer(*row) if row else None

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

    def put(self, key: str, **_: Any) -> None:
        return None

    def __len__(self) -> int:
        return 0

    def close(self) -> None:
        return None


def open_cache(path: str | os.PathLike[str] | None) -> AnswerCache | NoCache:
    """The cache at ``path``, or a no-op cache when ``path`` is empty or None."""
    return AnswerCache(path) if path else NoCache()
