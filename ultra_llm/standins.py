"""Stand-in replies for ``ultra run --estimate``: what an unsent request is answered with, so later stages run.

A judge whose later requests follow from its first replies (nuggets scored after they are created,
statements checked after they are extracted), or a step that judges what a generation step answered, can
only be counted if the earlier requests get some reply. Estimate mode answers each unsent request with:

1. ``same``: the cached answer to the same messages from another model (a judge or generator switched);
2. ``like``: else the cached answer to the same prompt (its name, any version) whose request is
   nearest in length (a larger run of the same pipeline);
3. ``placeholder``: else ``PLACEHOLDER``, which a reader declared by the prompt replaces with an example
   of its reply (``ultra_llm.asking``). Counts that follow a placeholder are a guess, and the estimate says so.

Stand-ins are never cached and never written to a file a setting names (``ultra_llm.estimate``).
"""

from __future__ import annotations

import bisect
import hashlib
import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ultra_base.file_limits import loads_limited
from ultra_llm.cache import encode, read_only

PLACEHOLDER = "(no reply: ultra run --estimate sent no request)"


@dataclass(frozen=True)
class StandIn:
    """A reply handed out in place of an unsent request's."""

    text: str
    completion_tokens: int
    kind: str  # "same" or "like" (a cached answer to the same or a like request), or "placeholder"


def stand_in(cache: str | Path | None, messages_json: str, prompt: str) -> StandIn:
    """The reply that stands in for the unsent request ``messages_json`` (``encode(messages)``) of ``prompt``."""
    index = _index(str(Path(cache).resolve()), _stamp(cache)) if cache and Path(cache).is_file() else None
    if index is not None:
        found = index.find(_digest(messages_json), prompt.split("@", 1)[0], len(messages_json))
        if found is not None:
            return index.answer(*found)
    return StandIn(PLACEHOLDER, 0, "placeholder")


def _digest(messages_json: str) -> str:
    return hashlib.sha256(messages_json.encode()).hexdigest()


class _Index:
    """Where a cache's chat answers are, by their messages and by their prompt's name (read once, read-only)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.by_messages: dict[str, int] = {}
        self.by_prompt: dict[str, list[tuple[int, int]]] = {}  # name -> sorted (request length, rowid)
        with read_only(path) as db:
            rows = db.execute("SELECT rowid, prompt, request FROM answers WHERE prompt != 'embeddings' ORDER BY rowid")
            for rowid, prompt, request in rows:
                try:
                    messages = encode(loads_limited(request, path=str(path)).get("messages"))
                except (ValueError, AttributeError):
                    continue
                self.by_messages[_digest(messages)] = rowid  # the newest answer wins
                self.by_prompt.setdefault(prompt.split("@", 1)[0], []).append((len(messages), rowid))
        for entries in self.by_prompt.values():
            entries.sort()

    def find(self, digest: str, name: str, length: int) -> tuple[int, str] | None:
        """The rowid of the same messages' answer ("same"), else of the same prompt's nearest in length ("like")."""
        if digest in self.by_messages:
            return self.by_messages[digest], "same"
        entries = self.by_prompt.get(name)
        if not entries:
            return None
        at = bisect.bisect_left(entries, (length, -1))
        near = [entries[i] for i in (at - 1, at) if 0 <= i < len(entries)]
        return min(near, key=lambda entry: (abs(entry[0] - length), -entry[1]))[1], "like"

    def answer(self, rowid: int, kind: str) -> StandIn:
        with read_only(self.path) as db:
            query = "SELECT text, completion_tokens FROM answers WHERE rowid = ?"
            text, tokens = db.execute(query, (rowid,)).fetchone()
        return StandIn(text or "", int(tokens or 0), kind)


def _stamp(cache: str | Path) -> tuple[int, int] | None:
    """The cache's newest rowid and size: an index read earlier serves until the cache changes."""
    try:
        with read_only(cache) as db:
            return db.execute("SELECT max(rowid), count(*) FROM answers").fetchone()
    except sqlite3.DatabaseError:
        return None


@lru_cache(maxsize=8)
def _index(path: str, stamp: tuple[int, int] | None) -> _Index | None:
    if stamp is None:
        return None
    try:
        return _Index(path)
    except sqlite3.DatabaseError:
        return None


def stand_in_vectors(cache: str | Path | None, count: int) -> list[list[float]]:
    """``count`` unit vectors as long as the cache's embeddings (3 when it holds none)."""
    size = 3
    if cache and Path(cache).is_file():
        try:
            with read_only(cache) as db:
                row = db.execute("SELECT text FROM answers WHERE prompt = 'embeddings' LIMIT 1").fetchone()
            size = len(loads_limited(row[0], path=str(cache))[0]) if row else size
        except (sqlite3.DatabaseError, ValueError, IndexError, TypeError):
            pass
    return [[1.0] + [0.0] * (size - 1) for _ in range(count)]
