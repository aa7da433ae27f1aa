"""A toy server with a ``SPEC``: ``ultra run`` calls its tools in-process (crash, hang, progress, logging)."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from typing_extensions import TypedDict

from ultra_kit.factory import ServerSpec
from ultra_kit.progress import progress_from_context

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


class Items(TypedDict):
    items: list[str]


class Count(TypedDict):
    count: int


def make_items(words: str) -> Items:
    """Split words on spaces."""
    return {"items": words.split()}


def count(items: list[str], ctx: Context | None = None) -> Count:
    """Count items, reporting progress per item and logging the count."""
    report = progress_from_context(ctx)
    for index in range(len(items)):
        report(index + 1, len(items), f"item {index + 1}")
    logging.getLogger("toy_spec").info("counted %d items", len(items))
    return {"count": len(items)}


def boom(items: list[str], mark: str) -> Count:
    """Fail with an unexpected error naming the first item."""
    raise RuntimeError(f"cannot count {items[0]}{mark}")


def nap(seconds: float) -> Count:
    """Sleep in a sync function (a worker thread), then return 0."""
    time.sleep(seconds)
    return {"count": 0}


async def async_nap(seconds: float) -> Count:
    """Sleep in an async function, then return 0."""
    await asyncio.sleep(seconds)
    return {"count": 0}


class Report(TypedDict):
    result_path: str
    scores: dict[str, float]


def write_report(items: list[str], directory: str) -> Report:
    """Write directory/report.html listing the items; return its path and a score per item length."""
    target = Path(directory) / "report.html"
    target.write_text("<html><body>" + "".join(f"<p>{item}</p>" for item in items) + "</body></html>")
    return {"result_path": str(target), "scores": {item: len(item) / 3 for item in items}}


TOOLS = [make_items, count, boom, nap, async_nap, write_report]
SPEC = ServerSpec("toy_spec", Path(__file__).parent, lambda: TOOLS)

if __name__ == "__main__":
    SPEC.create_app().run()
