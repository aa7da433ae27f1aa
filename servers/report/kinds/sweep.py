"""``ultra sweep``'s sweep.json as a kind of result file."""

from __future__ import annotations

from typing import Any

from servers.report.model import Found


def read_sweep(document: dict[str, Any], path: str) -> Found:
    """``ultra sweep``'s sweep.json: each finished trial is a run folder of its own."""
    keys = [str(k) for k in document.get("keys", [])]
    folders = []
    for row in document.get("rows", []):
        if row.get("status") == "ok" and row.get("folder"):
            setting = ", ".join(f"{k.rsplit('.', 1)[-1]}={row.get(k)}" for k in keys)
            folders.append((f"trial {row.get('trial')} ({setting})", str(row["folder"])))
    columns = ["trial", "rank", "status", *keys, str(document.get("metric", ""))]
    table = {"metric": document.get("metric"), "columns": columns, "rows": document.get("rows", [])}
    return Found("sweep", folders=folders, sweep=table)
