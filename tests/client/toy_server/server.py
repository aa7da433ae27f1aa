"""Toy tools that exercise the pipeline engine: renames, loops, routing, progress, timeouts, crashes."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context
from typing_extensions import TypedDict

from ultra_base.errors import InputError
from ultra_kit.factory import build_server
from ultra_kit.progress import progress_from_context


class Items(TypedDict):
    items: list[str]


class Route(TypedDict):
    route: str | list[str]


class Count(TypedDict):
    count: int


class KeyCheck(TypedDict):
    key_length: int


class Scored(TypedDict):
    scores: list[float | None]
    failed: dict[str, Any]


def make_items(words: str) -> Items:
    """Split words on spaces."""
    return {"items": words.split()}


def append_mark(items: list[str], mark: str) -> Items:
    """Append the mark setting to every item."""
    return {"items": [item + mark for item in items]}


def upper(items: list[str]) -> Items:
    """Upper-case every item."""
    return {"items": [item.upper() for item in items]}


def lower(items: list[str]) -> Items:
    """Lower-case every item."""
    return {"items": [item.lower() for item in items]}


def route_all(target: str) -> Route:
    """Route the whole pipeline to the branch named by the target setting."""
    return {"route": target}


def route_each(items: list[str]) -> Route:
    """Route items of up to 3 characters to 'short', the others to 'long'."""
    return {"route": ["short" if len(item) <= 3 else "long" for item in items]}


def count(items: list[str], ctx: Context) -> Count:
    """Count items, reporting progress per item."""
    report = progress_from_context(ctx)
    for index in range(len(items)):
        report(index + 1, len(items), f"item {index + 1}")
    return {"count": len(items)}


def nap(seconds: float) -> Count:
    """Sleep, then return 0."""
    time.sleep(seconds)
    return {"count": 0}


def crash() -> Count:
    """Kill the server process (simulates a server dying mid-run)."""
    print("toy server: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


def reject(items: list[str]) -> Count:
    """Always fail with a user error naming the first item as the file."""
    raise InputError("expected something else here", path=items[0], line=7)


def key_length(api_key: str) -> KeyCheck:
    """The length of the expanded api_key setting (never the key itself)."""
    return {"key_length": len(api_key)}


def score_items(items: list[str]) -> Scored:
    """Score 1.0 per item; items 'bad' (a parse failure) and 'slow' (a timeout) fail, as judge tools report it."""
    kinds = {"bad": "parse", "slow": "timeout"}
    failures = [(index, kinds[item]) for index, item in enumerate(items) if item in kinds]
    reasons: dict[str, int] = {}
    for _, kind in failures:
        reasons[kind] = reasons.get(kind, 0) + 1
    first = f"item {failures[0][0]}: {failures[0][1]} on {items[failures[0][0]]!r}" if failures else ""
    return {
        "scores": [None if item in kinds else 1.0 for item in items],
        "failed": {"count": len(failures), "total": len(items), "reasons": reasons, "first_error": first},
    }


def write_file(items: list[str], directory: str) -> Items:
    """Write items to a file and return its path as the only item."""
    target = Path(directory) / "items.txt"
    target.write_text("\n".join(items), encoding="utf-8")
    return {"items": [str(target)]}


def busy(seconds: float, directory: str) -> Count:
    """Write this process's pid to directory/busy.pid, sleep in this sync function, then write busy.done."""
    Path(directory, "busy.pid").write_text(str(os.getpid()), encoding="utf-8")
    time.sleep(seconds)
    Path(directory, "busy.done").write_text("finished", encoding="utf-8")
    return {"count": 0}


def explode(items: list[str], mark: str) -> Count:
    """Fail with an unexpected error whose message holds the first item and the mark setting."""
    raise ValueError(f"cannot count {items[0]} with {mark}")


app = build_server(
    "toy",
    [
        *(make_items, append_mark, upper, lower, route_all, route_each, count, nap, crash, reject, key_length),
        *(write_file, busy, explode),
        score_items,
    ],
    package_dir=Path(__file__).parent,
)

if __name__ == "__main__":
    app.run()
