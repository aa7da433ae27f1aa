"""Atomic file writes with collision-free names, so no reader ever sees half a file."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import IO, Any


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once: os.umask is process-wide and not thread-safe


def unique_path(path: str | os.PathLike[str]) -> Path:
    """Return ``path`` itself if free, else the same name with ``_1``, ``_2`` ... before the suffix."""
    path = Path(path)
    if not path.exists():
        return path
    suffix = "".join(path.suffixes[-1:])
    stem = path.name[: len(path.name) - len(suffix)] if suffix else path.name
    counter = 1
    while True:
        candidate = path.with_name(f"{stem}_{counter}{suffix}")
        if not candidate.exists():
            return candidate
        counter += 1


def timestamped_path(directory: str | os.PathLike[str], stem: str, suffix: str) -> Path:
    """A new, unused path ``directory/stem_YYYYmmdd_HHMMSS<suffix>``."""
    stamp = datetime.now().strftime("%Y%m%d_%H%M%S")
    return unique_path(Path(directory) / f"{stem}_{stamp}{suffix}")


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[str]], None]) -> Path:
    """Write a text file through ``write(handle)`` into a temporary file, then rename it into place.

    If ``write`` raises, the temporary file is removed and ``path`` is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o666 & ~_UMASK)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically."""
    return atomic_write(path, lambda handle: handle.write(text))


def atomic_write_json(path: str | os.PathLike[str], data: Any, *, indent: int | None = 2) -> Path:
    """Write ``data`` as JSON to ``path`` atomically (UTF-8, non-ASCII kept as is)."""
    return atomic_write(path, lambda handle: json.dump(data, handle, ensure_ascii=False, indent=indent))


def atomic_write_jsonl(path: str | os.PathLike[str], rows: Iterable[Any]) -> Path:
    """Write one JSON document per line to ``path`` atomically."""

    def write(handle: IO[str]) -> None:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False))
            handle.write("\n")

    return atomic_write(path, write)


def result_path(save_path: str | os.PathLike[str], tool_name: str, suffix: str = ".json") -> Path:
    """Where a tool saves its result, never overwriting an earlier one.

    ``save_path`` is either a directory (no suffix, or an existing directory): the file is
    ``<dir>/<tool_name>_<timestamp><suffix>``; or a file name, made unique with ``_1``, ``_2`` ...
    """
    target = Path(save_path).expanduser()
    if target.is_dir() or not target.suffix:
        return timestamped_path(target, tool_name, suffix)
    return unique_path(target)
