"""The run index: ``<output dir>/runs.sqlite``, one row per run folder, for ``ultra runs``.

``ultra run`` records each finished run (its pipeline, start, duration, scalar results and gate status);
``ultra runs`` first adds the folders the index does not know yet (a run that failed, one copied in), and
``ultra runs --rebuild`` recreates every row from the folders. Every write is one ``BEGIN IMMEDIATE``
transaction on a WAL database with a busy timeout, so concurrent runs wait for each other instead of
corrupting the file or losing a row.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_kit.limits.json_files import loads_limited

INDEX_NAME = "runs.sqlite"
BUSY_TIMEOUT_SECONDS = 60.0
FOLDER_NAME = re.compile(r"^(?P<pipeline>.+)_(?P<stamp>\d{8}_\d{6})(?:_\d+)?$")  # commands.new_run_folder's names
NOT_KEY_METRICS = ("counts", "usage", "failed", "data_info", "ranking")  # bookkeeping variables, not quality
KEY_METRICS_SHOWN = 3

COLUMNS = ("folder", "pipeline", "started", "status", "duration", "metrics", "cost", "gate")
SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    folder TEXT PRIMARY KEY,      -- the folder's name, under the output dir
    pipeline TEXT NOT NULL,
    started TEXT NOT NULL,        -- ISO 8601, local time, from the folder's name
    status TEXT NOT NULL,         -- ok | incomplete (no memory.json: failed, stopped or still running) | unreadable
    duration REAL,                -- seconds (timings.json)
    metrics TEXT NOT NULL,        -- JSON {name: value} of every scalar result
    cost REAL,                    -- USD when known
    gate TEXT                     -- pass | fail | error when the run was gated
)
"""


@contextmanager
def connect(output_dir: str | Path) -> Iterator[sqlite3.Connection]:
    """A connection to the output dir's index (created if missing), WAL mode and a busy timeout."""
    path = Path(output_dir) / INDEX_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(SCHEMA)
        yield connection
    finally:
        connection.close()


@contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error): the write lock is taken up front."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def run_start(name: str) -> tuple[str, str] | None:
    """(pipeline, ISO start) of a run folder's name (``<pipeline>_<YYYYmmdd>_<HHMMSS>[_n]``); None for any other
    name, a date that does not exist (``x_20261399_999999``) included."""
    found = FOLDER_NAME.match(name)
    if found is None:
        return None
    try:
        return found["pipeline"], datetime.strptime(found["stamp"], "%Y%m%d_%H%M%S").isoformat()
    except ValueError:
        return None


def describe_folder(folder: Path, gate: str | None = None, cost: float | None = None) -> dict[str, Any] | None:
    """The index row of a run folder, read from its files; None if the folder's name is not a run's. A
    ``memory.json`` that cannot be read (too large, nested too deeply, malformed) makes the row ``unreadable``,
    with a warning naming the file and the reason: one odd folder never breaks the listing."""
    named = run_start(folder.name)
    if named is None or not folder.is_dir():
        return None
    from ultra_client.runs.records import UnreadableRecord, optional_json_record, read_memory

    metrics: dict[str, float] = {}
    status = "incomplete"
    try:
        memory = read_memory(folder)
    except UnreadableRecord as exc:
        print(f"[ultra] warning: {exc}; the run is listed as unreadable", file=sys.stderr)
        memory, status = None, "unreadable"
    if memory is not None:
        from ultra_client.sweep.trials import flatten, split_non_finite

        status = "ok"
        metrics = split_non_finite(flatten(memory))[0]
    if cost is None:
        from ultra_client.summary.costs import run_usage

        usage = run_usage(folder)
        cost = usage["total"].get("cost_usd") if usage else None
    duration = None
    with suppress(ValueError, KeyError, TypeError):
        duration = float(optional_json_record(folder / "timings.json", "run timings")["total_seconds"])
    return {
        "folder": folder.name,
        "pipeline": named[0],
        "started": named[1],
        "status": status,
        "duration": duration,
        "metrics": json.dumps(metrics),
        "cost": cost,
        "gate": gate,
    }


def _upsert(connection: sqlite3.Connection, row: dict[str, Any]) -> None:
    columns = ", ".join(row)
    marks = ", ".join(f":{name}" for name in row)
    connection.execute(f"INSERT OR REPLACE INTO runs ({columns}) VALUES ({marks})", row)


def record(folder: str | Path, gate: str | None = None, cost: float | None = None) -> None:
    """Add or update one run folder's row (in the index of the folder's output dir)."""
    folder = Path(folder)
    row = describe_folder(folder, gate, cost)
    if row is None:
        return
    with connect(folder.parent) as connection, transaction(connection):
        _upsert(connection, row)


def holds_runs(output_dir: Path) -> bool:
    """Whether ``output_dir`` already has an index or a folder named like a run's: only there may ``ultra runs``
    create an index (a listing command never writes into any folder it is given)."""
    if (output_dir / INDEX_NAME).exists():
        return True
    return any(run_start(p.name) is not None and p.is_dir() for p in output_dir.iterdir())


def readable_index(output_dir: Path) -> bool:
    """Whether the output dir's index opens and its runs table reads (a corrupt file does not)."""
    try:
        with connect(output_dir) as connection:
            connection.execute(f"SELECT {', '.join(COLUMNS)} FROM runs LIMIT 1").fetchone()  # another schema fails
            return connection.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    except sqlite3.DatabaseError:
        return False


def set_aside(output_dir: Path) -> Path:
    """Rename a corrupt index (and its WAL files) to ``runs.sqlite.corrupt`` (``.corrupt.1``, ... when an earlier
    one is kept there), so a rebuild starts afresh; its path."""
    kept = output_dir / f"{INDEX_NAME}.corrupt"
    number = 0
    while any(output_dir.joinpath(f"{kept.name}{suffix}").exists() for suffix in ("", "-wal", "-shm")):
        number += 1
        kept = output_dir / f"{INDEX_NAME}.corrupt.{number}"
    for suffix in ("", "-wal", "-shm"):
        path = output_dir / (INDEX_NAME + suffix)
        if path.exists():
            path.replace(output_dir / f"{kept.name}{suffix}")
    return kept


def sync(output_dir: str | Path, rebuild: bool = False) -> int:
    """Add the run folders the index lacks and drop the rows of removed ones (``rebuild``: recreate every row);
    how many rows were written.

    A rebuild keeps the gate verdicts and costs already recorded (the folders do not hold them).
    """
    output_dir = Path(output_dir)
    folders = sorted(p for p in output_dir.iterdir() if p.is_dir()) if output_dir.is_dir() else []
    with connect(output_dir) as connection, transaction(connection):
        known = {name: (gate, cost) for name, gate, cost in connection.execute("SELECT folder, gate, cost FROM runs")}
        if rebuild:
            connection.execute("DELETE FROM runs")
        else:  # a folder removed since is no longer a run to list
            present = {folder.name for folder in folders}
            connection.executemany("DELETE FROM runs WHERE folder = ?", [(n,) for n in known if n not in present])
        written = 0
        for folder in folders:
            if folder.name in known and not rebuild:
                continue
            row = describe_folder(folder, *known.get(folder.name, (None, None)))
            if row is not None:
                _upsert(connection, row)
                written += 1
    return written


def list_runs(output_dir: str | Path, pipeline: str | None = None, since: str | None = None) -> list[dict[str, Any]]:
    """The index's rows, newest first; ``pipeline`` and ``since`` (an ISO date or time) filter them."""
    query, values = "SELECT * FROM runs WHERE 1 = 1", []
    if pipeline:
        query += " AND pipeline = ?"
        values.append(pipeline)
    if since:
        query += " AND started >= ?"
        values.append(since)
    with connect(output_dir) as connection:
        connection.row_factory = sqlite3.Row
        rows = [dict(row) for row in connection.execute(query + " ORDER BY started DESC, folder DESC", values)]
    for row in rows:  # the index is ultra's own, but a copied-in one may have been edited: within the limits
        try:
            row["metrics"] = loads_limited(
                row["metrics"] or "{}", path=f"{Path(output_dir) / INDEX_NAME} ({row['folder']})"
            )
        except InputError as exc:
            row["metrics"], row["status"] = {}, "unreadable"
            print(f"[ultra] {exc}; ultra runs --rebuild rewrites the index from the run folders", file=sys.stderr)
    return rows


def key_metrics(metrics: dict[str, float], shown: int = KEY_METRICS_SHOWN) -> dict[str, float]:
    """The first few quality results of a run: bookkeeping variables (counts, usage, failures) left out."""
    picked = {}
    for name, value in metrics.items():
        variable, _, key = name.partition(".")
        if variable in NOT_KEY_METRICS or key.startswith(("num_", "queries_")) or name.startswith("num_"):
            continue
        picked[name] = value
        if len(picked) == shown:
            break
    return picked
