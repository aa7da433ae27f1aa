"""The label store that ``ultra annotate`` writes (``output/labels.sqlite``), and what the evaluation tools read
of it: its schema, and the current labels per system and item, with the probabilities active selection drew them with.

Tables: ``meta`` (key, value: the scale, its hash, how items were selected), ``items`` (one row per item to
label: ``key`` = ``system::id`` or ``id``, its system and id, content hash, queue position, sampling probability
and whether it was drawn (both NULL until active selection decides the item), how many annotators it needs, the
judge's score and where the probability came from), ``labels`` (one row per action, never deleted: a label,
a skip or a flag, with the annotator, the time, the item's content hash and the scale's hash; ``undone`` marks one
taken back), ``reasons`` (the judge's reasoning per item, where SOURCE gave one) and ``claims`` (which annotator
holds which item now).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path

from ultra_base.errors import InputError, existing_file

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    key TEXT PRIMARY KEY, system TEXT NOT NULL, item_id TEXT NOT NULL, content_hash TEXT NOT NULL,
    position INTEGER NOT NULL, prob REAL, drawn INTEGER, copies INTEGER NOT NULL, judge REAL, source TEXT);
CREATE TABLE IF NOT EXISTS labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL REFERENCES items(key), annotator TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('label', 'skip', 'flag')), value REAL, comment TEXT, time TEXT NOT NULL,
    content_hash TEXT NOT NULL, scale_hash TEXT NOT NULL, undone INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS labels_by_key ON labels (key, annotator);
CREATE TABLE IF NOT EXISTS reasons (key TEXT PRIMARY KEY REFERENCES items(key), reasoning TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS claims (key TEXT NOT NULL, annotator TEXT NOT NULL, time TEXT NOT NULL,
    PRIMARY KEY (key, annotator));
"""

# the latest action per item and annotator that was not taken back
CURRENT = """
SELECT l.key, i.system, i.item_id, l.annotator, l.kind, l.value, l.comment, l.time
FROM labels l JOIN items i ON i.key = l.key
WHERE l.undone = 0 AND l.id = (SELECT MAX(id) FROM labels WHERE key = l.key AND annotator = l.annotator AND undone = 0)
ORDER BY l.id
"""


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (creating) the store in write-ahead mode, so several annotators' servers may share it."""
    connection = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA busy_timeout=30000")
    connection.executescript(SCHEMA)
    if "source" not in {row[1] for row in connection.execute("PRAGMA table_info(items)")}:
        connection.execute("ALTER TABLE items ADD COLUMN source TEXT")  # a store made before probabilities' sources
    connection.row_factory = sqlite3.Row
    return connection


def is_label_store(path: str | Path) -> bool:
    """True for a ``.sqlite`` file: a label store rather than a JSON or JSONL labels file."""
    return Path(path).suffix in (".sqlite", ".db")


def open_store(path: str | Path) -> sqlite3.Connection:
    file = existing_file(path, what="label store (ultra annotate writes output/labels.sqlite)")
    try:
        connection = sqlite3.connect(f"file:{file.resolve()}?mode=ro", uri=True, timeout=30)
        connection.row_factory = sqlite3.Row
        connection.execute("SELECT 1 FROM labels LIMIT 1")
    except sqlite3.DatabaseError as exc:
        raise InputError(f"not a label store of ultra annotate ({exc})", path=str(path)) from None
    return connection


def current_labels(path: str | Path) -> list[dict]:
    """Every annotator's current label (not skips or flags, nothing undone): system, item_id, annotator, value."""
    with open_store(path) as connection:
        rows = connection.execute(CURRENT).fetchall()
    return [dict(row) for row in rows if row["kind"] == "label"]


def label_samples(path: str | Path) -> dict[str, dict[str, list[float]]]:
    """Per system, per item the values its annotators gave (several when it was labelled with overlap)."""
    out: dict[str, dict[str, list[float]]] = defaultdict(dict)
    for row in current_labels(path):
        out[row["system"]].setdefault(row["item_id"], []).append(float(row["value"]))
    return dict(out)


def labels_by_system(path: str | Path) -> dict[str, dict[str, float]]:
    """Per system, per item its label: the mean of its annotators' values."""
    return {s: {i: sum(v) / len(v) for i, v in items.items()} for s, items in label_samples(path).items()}


def sampling_probs(path: str | Path) -> dict[str, dict[str, float]]:
    """Per system, per labelled item the probability it came to be labelled; {} unless selection was active.

    Active selection decides the items in a random order, drawing item i with probability prob_i, and shows the
    drawn ones in that order. When d of the N items were decided (people stopped before the end) and k of the m
    drawn items carry a label, the decided items are a uniform share d / N of all, and the labelled ones a
    uniform share k / m of the drawn ones, so item i was labelled with probability prob_i * (d / N) * (k / m).
    """
    labelled = {(r["system"], r["item_id"]) for r in current_labels(path)}
    with open_store(path) as connection:
        rows = connection.execute("SELECT system, item_id, prob FROM items WHERE drawn = 1").fetchall()
        decided, total = connection.execute("SELECT COUNT(drawn), COUNT(*) FROM items").fetchone()
    if not rows or any(row["prob"] is None for row in rows):
        return {}
    share = len({(r["system"], r["item_id"]) for r in rows} & labelled) / len(rows) * decided / total
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for row in rows:
        if (row["system"], row["item_id"]) in labelled:
            out[row["system"]][row["item_id"]] = float(row["prob"]) * share
    return dict(out)
