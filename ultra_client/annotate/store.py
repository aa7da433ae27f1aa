"""The annotate server's side of the label store (schema and readers: ``ultra_kit.labels.store``): the items and
their queue, written once; who holds which item; each label written the moment it is given.

Every change is one ``BEGIN IMMEDIATE`` transaction, so several servers (one per annotator) may share a store:
an item goes to one annotator at a time, or to ``copies`` of them when overlap asks for it. A claim is held
until its annotator acts on the item; one left by a server that died is given to others after ``CLAIM_SECONDS``.
Under active selection an item is decided (its probability set, then drawn or not) only when someone needs a next
item and none drawn is left: ``select.Sequential`` sets the probability from the labels given by then.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ultra_base.errors import InputError
from ultra_client.annotate import FIT_AFTER, UNIFORM_SHARE
from ultra_client.annotate.error_model import item_features
from ultra_client.annotate.scales import Scale
from ultra_client.annotate.select import Sequential, expected_error, own_uniform
from ultra_client.annotate.source import Item
from ultra_kit.labels.store import connect

CLAIM_SECONDS = 1800

# the first item in queue order this annotator has not acted on and that fewer than its copies hold or labelled
NEXT = """
SELECT i.key FROM items i WHERE i.drawn = 1
  AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.key = i.key AND l.annotator = :me AND l.undone = 0)
  AND (SELECT COUNT(DISTINCT who) FROM (
         SELECT annotator AS who FROM labels WHERE key = i.key AND undone = 0 AND kind != 'skip' AND annotator != :me
         UNION SELECT annotator FROM claims WHERE key = i.key AND annotator != :me AND time > :fresh)) < i.copies
ORDER BY i.position LIMIT 1
"""

# per item its people's current label (the mean of its annotators'), for the error model
LABELLED = """
SELECT l.key, AVG(l.value) FROM labels l
WHERE l.undone = 0 AND l.id = (SELECT MAX(id) FROM labels WHERE key = l.key AND annotator = l.annotator AND undone = 0)
  AND l.kind = 'label'
GROUP BY l.key
"""


class Decider:
    """Active selection's side of a store: the items' probabilities (``Sequential``), where each item sits in
    it (SOURCE's order), the seed of the draws and the scale's ends (labels are fitted on 0-1)."""

    def __init__(self, sequential: Sequential, keys: list[str], seed: int, low: float, high: float) -> None:
        self.sequential, self.index, self.seed = sequential, {key: i for i, key in enumerate(keys)}, seed
        self.low, self.span = low, (high - low) or 1.0

    def decide(self, db: Any) -> None:
        """Decide the undecided items in queue order until one is drawn (or none is left)."""
        undecided = db.execute("SELECT key, position FROM items WHERE drawn IS NULL ORDER BY position").fetchall()
        labels = {self.index[key]: (value - self.low) / self.span for key, value in db.execute(LABELLED)}
        rest = [self.index[key] for key, _ in undecided]
        for k, (key, position) in enumerate(undecided):
            prob, source = self.sequential.probability(self.index[key], rest[k:], labels)
            drawn = own_uniform(self.seed, position) < prob
            db.execute(
                "UPDATE items SET prob = ?, drawn = ?, source = ? WHERE key = ?", (prob, int(drawn), source, key)
            )
            if drawn:
                return


class LabelStore:
    """One annotator's server's connection to the store."""

    def __init__(self, path: str | Path, scale: Scale) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = Path(path)
        self.connection = connect(path)
        self.scale = scale
        self.lock = threading.Lock()
        self.decider: Decider | None = None  # set under active selection

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        with self.lock:
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                yield self.connection
            except BaseException:
                self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")

    def setup(self, items: list[Item], queue: list[dict[str, Any]], meta: dict[str, Any]) -> bool:
        """Write the items and their queue (position, prob, drawn, copies) unless the store has them; True when
        it did. A store made on another scale or other items is refused rather than mixed."""
        with self.transaction() as db:
            known = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if known:
                if known.get("scale_hash") != self.scale.digest():
                    raise InputError(f"this label store was made with another scale ({known.get('scale')}); "
                                     "use another --store or the same --scale")  # fmt: skip
                stored = {row[0] for row in db.execute("SELECT key FROM items")}
                if stored != {item.key for item in items}:
                    raise InputError("this label store holds other items than SOURCE's: use another --store")
                self._reasons(db, items)
                return False
            db.executemany(
                "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                [(item.key, item.system, item.item_id, item.content_hash(), q["position"], q["prob"],
                  None if q["drawn"] is None else int(q["drawn"]), q["copies"], item.judge)
                 for item, q in zip(items, queue, strict=True)],
            )  # fmt: skip
            meta = {**meta, "scale": json.dumps(self.scale.as_dict()), "scale_hash": self.scale.digest()}
            db.executemany("INSERT INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in meta.items()])
            self._reasons(db, items)
        return True

    @staticmethod
    def _reasons(db: Any, items: list[Item]) -> None:
        """The judge's reasoning per item (what the disagreements page and the report show beside a verdict)."""
        db.executemany("INSERT OR REPLACE INTO reasons VALUES (?, ?)",
                       [(item.key, item.reasoning) for item in items if item.reasoning])  # fmt: skip

    def follow_selection(self, items: list[Item], *, low: float, high: float) -> None:
        """Under active selection (as the store was set up, whatever this server's options), decide the items as
        people need them; SOURCE's ``items`` give the judge's scores and the error model's features."""
        meta = dict(self.connection.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("select") != "active":
            return
        span = (high - low) or 1.0
        judge = [item.judge for item in items]
        sequential = Sequential(
            judge=np.clip((np.array(judge, float) - low) / span, 0, 1), features=item_features(items, low, high),
            heuristic=expected_error(judge, [item.samples for item in items], low, high),
            budget=float(meta["budget"]), uniform_share=float(meta.get("uniform_share", UNIFORM_SHARE)),
            fit_after=int(meta.get("fit_after", FIT_AFTER)),
        )  # fmt: skip
        self.decider = Decider(sequential, [item.key for item in items], int(meta["seed"]), low, high)

    def claimed(self, annotator: str) -> str | None:
        """The item this annotator holds and has not acted on (after a reload or a restart)."""
        row = self.connection.execute(
            "SELECT c.key FROM claims c JOIN items i ON i.key = c.key WHERE c.annotator = ? AND NOT EXISTS "
            "(SELECT 1 FROM labels l WHERE l.key = c.key AND l.annotator = c.annotator AND l.undone = 0) "
            "ORDER BY i.position LIMIT 1",
            (annotator,),
        ).fetchone()
        return row[0] if row else None

    def next_key(self, annotator: str) -> str | None:
        """The item to show this annotator next, claimed for them; None when nothing is left for them."""
        with self.transaction() as db:
            held = self.claimed(annotator)
            if held:
                return held
            fresh = {"me": annotator, "fresh": time.time() - CLAIM_SECONDS}
            row = db.execute(NEXT, fresh).fetchone()
            if row is None and self.decider is not None:
                self.decider.decide(db)
                row = db.execute(NEXT, fresh).fetchone()
            if row is None:
                return None
            db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?)", (row[0], annotator, time.time()))
            return row[0]

    def record(self, annotator: str, key: str, kind: str, value: float | None, comment: str | None) -> int:
        """Write one action (label, skip or flag) now; a second label of the same item by the same annotator
        replaces the first (which stays, superseded). Returns the row's id."""
        with self.transaction() as db:
            item = db.execute("SELECT content_hash FROM items WHERE key = ?", (key,)).fetchone()
            if item is None:
                raise InputError(f"no item {key!r} in this label store")
            stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
            cursor = db.execute(
                "INSERT INTO labels (key, annotator, kind, value, comment, time, content_hash, scale_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, annotator, kind, value, comment, stamp, item[0], self.scale.digest()),
            )
            db.execute("DELETE FROM claims WHERE key = ? AND annotator = ?", (key, annotator))
            return int(cursor.lastrowid or 0)

    def undo(self, annotator: str) -> str | None:
        """Take back this annotator's last action; the item is theirs again. Returns its key (None: nothing)."""
        with self.transaction() as db:
            row = db.execute("SELECT id, key FROM labels WHERE annotator = ? AND undone = 0 ORDER BY id DESC LIMIT 1",
                             (annotator,)).fetchone()  # fmt: skip
            if row is None:
                return None
            db.execute("UPDATE labels SET undone = 1 WHERE id = ?", (row[0],))
            db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?)", (row[1], annotator, time.time()))
            return row[1]

    def mine(self, annotator: str, key: str) -> dict[str, Any] | None:
        """This annotator's current action on an item (kind, value, comment), or None."""
        row = self.connection.execute(
            "SELECT kind, value, comment FROM labels WHERE key = ? AND annotator = ? AND undone = 0 "
            "ORDER BY id DESC LIMIT 1", (key, annotator)).fetchone()  # fmt: skip
        return dict(row) if row else None

    def progress(self, annotator: str) -> dict[str, Any]:
        """How far the labelling is: items in the queue, labels wanted, labels given (all, and this annotator's).
        Under active selection the items not decided yet count with the draws they are expected to give."""
        db = self.connection
        queued, wanted = db.execute("SELECT COUNT(*), COALESCE(SUM(copies), 0) FROM items WHERE drawn = 1").fetchone()
        undecided, total = db.execute("SELECT COUNT(*) - COUNT(drawn), COUNT(*) FROM items").fetchone()
        if undecided and self.decider is not None:
            expected = round(min(1.0, self.decider.sequential.budget / total) * undecided)
            queued, wanted = queued + expected, wanted + expected
        current = "SELECT DISTINCT key, annotator, kind FROM labels WHERE undone = 0"
        labels = db.execute(f"SELECT COUNT(*) FROM ({current}) WHERE kind = 'label'").fetchone()[0]
        mine = db.execute(f"SELECT kind, COUNT(*) FROM ({current}) WHERE annotator = ? GROUP BY kind",
                          (annotator,)).fetchall()  # fmt: skip
        counts = {kind: n for kind, n in mine}
        return {"items": queued, "labels_wanted": wanted, "labels": labels, "annotator": annotator,
                "mine": counts.get("label", 0), "skipped": counts.get("skip", 0), "flagged": counts.get("flag", 0),
                "done": self.next_key_preview(annotator) is None and not undecided}  # fmt: skip

    def next_key_preview(self, annotator: str) -> str | None:
        """What ``next_key`` would give, without claiming it."""
        held = self.claimed(annotator)
        if held:
            return held
        row = self.connection.execute(NEXT, {"me": annotator, "fresh": time.time() - CLAIM_SECONDS}).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        self.connection.close()
