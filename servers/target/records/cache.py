"""The reply cache across runs, used only when ``target_cache`` names a SQLite file: the system may change
behind the same address, so reusing its answers is the user's explicit choice. Only successful replies are
stored. The key hashes the target's identity (no ``api_key``) and what the turn sends."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from servers.target.records.journal import identity_of
from ultra_base.file_limits import loads_limited

SCHEMA = "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, record TEXT NOT NULL, created REAL NOT NULL)"
REPLY_FIELDS = ("answer", "contexts", "citations", "usage", "latency")


def cache_key(target: Mapping[str, Any], question: str, item_id: str, history: Any) -> str:
    identity = identity_of(target, leave_out=("api_key",))
    request = {"target": identity, "question": question, "id": item_id, "history": history}
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


class ReplyCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute(SCHEMA)

    def get(self, key: str) -> dict[str, Any] | None:
        row = self.connection.execute("SELECT record FROM replies WHERE key = ?", (key,)).fetchone()
        return loads_limited(row[0], path="the target cache") if row else None

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        import time

        kept = json.dumps({name: record.get(name) for name in REPLY_FIELDS}, ensure_ascii=False)
        self.connection.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?)", (key, kept, time.time()))

    def close(self) -> None:
        self.connection.close()
