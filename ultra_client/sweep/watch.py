"""Waiting for a shared study to change. A storage in files on this machine (a journal file, SQLite) is watched
with ``os.stat`` every few milliseconds, so a waiting worker sees the last trial's end, or a lost trial's retry,
as soon as it is written, without reading the study each time. A database server is simply looked at again
after the wait."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio

WATCH_SECONDS = 0.005  # between two looks at the files' size and time


def signature(files: tuple[Path, ...]) -> tuple:
    """What changes when the storage is written: each file's size, time and inode (None while it is missing)."""
    marks = []
    for path in files:
        try:
            status = os.stat(path)
        except OSError:
            marks.append(None)
            continue
        marks.append((status.st_size, status.st_mtime_ns, status.st_ino))
    return tuple(marks)


async def until_changed(files: tuple[Path, ...], before: tuple, seconds: float) -> None:
    """Return once ``files`` differ from ``before`` (their ``signature`` taken before the last look at the study),
    or after ``seconds``; with no files, after ``seconds``."""
    if not files:
        await anyio.sleep(seconds)
        return
    end = time.monotonic() + seconds
    while signature(files) == before:
        left = end - time.monotonic()
        if left <= 0:
            return
        await anyio.sleep(min(WATCH_SECONDS, left))
