"""Which batches this cache has in flight: batch ids and their requests' cache keys, in the cache database.

A batch is recorded as soon as the endpoint has created it, in one transaction with the keys of its
requests, so a process killed while the batch runs finds it again: the rerun polls that batch
instead of sending the same requests once more. A batch whose results were read is marked done.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS batches (
        batch_id TEXT PRIMARY KEY,
        endpoint TEXT NOT NULL,
        model_id TEXT NOT NULL,
        input_file_id TEXT NOT NULL,
        requests INTEGER NOT NULL,
        state TEXT NOT NULL,
        created REAL NOT NULL
    )""",
    "CREATE TABLE IF NOT EXISTS batch_items (key TEXT NOT NULL, batch_id TEXT NOT NULL, PRIMARY KEY (key, batch_id))",
    "CREATE INDEX IF NOT EXISTS batch_items_by_batch ON batch_items (batch_id)",
)


class BatchLedger:
    """The ``batches`` and ``batch_items`` tables of the answer cache's SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        for statement in SCHEMA:
            self._db.execute(statement)
        self._lock = threading.Lock()

    def record(self, batch_id: str, *, endpoint: str, model_id: str, input_file_id: str, keys: list[str]) -> None:
        """Remember a created batch and its requests' keys (one transaction)."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO batches VALUES (?, ?, ?, ?, ?, 'open', ?)",
                    (batch_id, endpoint, model_id, input_file_id, len(keys), time.time()),
                )
                self._db.executemany("INSERT OR IGNORE INTO batch_items VALUES (?, ?)", ((k, batch_id) for k in keys))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def in_flight(self, *, endpoint: str, model_id: str) -> dict[str, str]:
        """``{cache key: batch id}`` of the open batches sent to ``endpoint`` for ``model_id``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT i.key, i.batch_id FROM batch_items i JOIN batches b ON b.batch_id = i.batch_id "
                "WHERE b.state = 'open' AND b.endpoint = ? AND b.model_id = ?",
                (endpoint, model_id),
            ).fetchall()
        return dict(rows)

    def keys(self, batch_id: str) -> list[str]:
        """The cache keys of one batch's requests."""
        with self._lock:
            return [row[0] for row in self._db.execute("SELECT key FROM batch_items WHERE batch_id = ?", (batch_id,))]

    def done(self, batch_id: str, state: str) -> None:
        """Mark a batch whose results were read (``state``: its final status)."""
        with self._lock:
            self._db.execute("UPDATE batches SET state = ? WHERE batch_id = ?", (f"done:{state}", batch_id))

    def batches(self) -> list[tuple[str, str, int]]:
        """(batch id, state, requests) of every recorded batch, oldest first."""
        with self._lock:
            return self._db.execute("SELECT batch_id, state, requests FROM batches ORDER BY created").fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()
