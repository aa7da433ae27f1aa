"""Atomic file writes with names reserved atomically, so no reader ever sees half a file.

A result's name is reserved with ``O_CREAT | O_EXCL`` before anything is written, so two calls
sharing a folder never pick the same name; the content is then written to a temporary file and
renamed onto the reserved name. Results go under the output root (``ultra_kit.paths.output_root``);
a server started with ``ULTRA_HOME`` writes under ``<ULTRA_HOME>/output`` (``ultra_kit.paths.project_root``).
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from ultra_base import redact, write_hooks
from ultra_base.environment import ESTIMATE_ENV, PROJECT_ROOT_ENV
from ultra_base.errors import InputError
from ultra_kit.paths.output_root import check_save_path

_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once: os.umask is process-wide and not thread-safe
_reserved: set[str] = set()  # names this process reserved (empty files) and has not written yet
_reserved_lock = threading.Lock()
_writing: set[str] = set()  # temporary files atomic_write is filling (guarded by _reserved_lock)
_call_reserved: ContextVar[set[str] | None] = ContextVar("call_reserved", default=None)


def _reserve(path: Path) -> bool:
    """Create ``path`` (an empty file, or a folder when it has no suffix) only if nothing is there."""
    try:
        if path.suffix:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        else:
            os.mkdir(path)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno in _NO_SPACE:
            raise InputError(f"no space left on device writing {path}") from None
        raise
    if path.suffix:
        with _reserved_lock:
            _reserved.add(str(path))
        names = _call_reserved.get()
        if names is not None:
            names.add(str(path))
    return True


@contextmanager
def released_on_failure() -> Iterator[None]:
    """Names reserved inside the block and still empty are removed if the block raises (no empty result files)."""
    names: set[str] = set()
    token = _call_reserved.set(names)
    try:
        yield
    except BaseException:
        for name in list(names):
            _release(Path(name))
        raise
    finally:
        _call_reserved.reset(token)


def _still_reserved(path: Path) -> bool:
    """True if this process reserved ``path`` and it is still the empty placeholder."""
    with _reserved_lock:
        if str(path) not in _reserved:
            return False
        try:
            if path.stat().st_size == 0:
                return True
        except OSError:
            pass
        _reserved.discard(str(path))
        return False


def unique_path(path: str | os.PathLike[str]) -> Path:
    """Reserve ``path``, or the same name with ``_1``, ``_2`` ... before the suffix, and return it.

    The name is taken atomically (``O_EXCL``; a folder for a name without suffix), so parallel
    callers never get the same one. A name that ``result_path`` of this process reserved and that
    is still empty is handed over as is (``result_path(...).with_suffix(...)`` then works).
    """
    path = Path(path)
    return path if _still_reserved(path) else _unique(path)


def _unique(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if _reserve(path):
        return path
    suffix = "".join(path.suffixes[-1:])
    stem = path.name[: len(path.name) - len(suffix)] if suffix else path.name
    counter = 1
    while True:
        candidate = path.with_name(f"{stem}_{counter}{suffix}")
        if _reserve(candidate):
            return candidate
        counter += 1


def new_path(path: str | os.PathLike[str]) -> Path:
    """Reserve exactly ``path`` (a file, ``O_EXCL``), or an InputError when something is there: never overwritten."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not _reserve(path):
        raise InputError(f"{path} exists and is not overwritten: give another name or remove it")
    return path


def timestamped_path(directory: str | os.PathLike[str], stem: str, suffix: str) -> Path:
    """A new, reserved path ``directory/stem_YYYYmmdd_HHMMSS<suffix>``."""
    stamp = datetime.now().strftime("%Y%m%d_%H%M%S")
    return _unique(Path(directory) / f"{stem}_{stamp}{suffix}")


def estimating() -> bool:
    """True under ``ultra run --estimate`` (``$ULTRA_LLM_ESTIMATE`` names its ledger)."""
    return bool(os.environ.get(ESTIMATE_ENV, "").strip())


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[str]], None]) -> Path:
    """Write a text file through ``write(handle)`` into a temporary file, then rename it into place.

    Once a ``${VAR}`` value is known (``ultra_base.redact``), every piece written is redacted on
    its way to the file, so no result file ever holds one.

    If ``write`` raises, the temporary file is removed and ``path`` is left untouched (a name
    reserved by this process and never written is removed too). A full disk is an InputError
    saying so. The checks libraries registered (``ultra_base.write_hooks``: estimate mode's) run first.
    """
    return _write_atomically(Path(path), write, binary=False)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` (a PNG, say) to ``path`` as ``atomic_write`` writes text: a temporary file renamed into place,
    with the same checks, permissions (0666 less the umask) and errors."""
    return _write_atomically(Path(path), lambda handle: handle.write(data), binary=True)


def _write_atomically(path: Path, write: Callable[[Any], Any], *, binary: bool) -> Path:
    write_hooks.check_write(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_name = None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with _reserved_lock:
            _writing.add(tmp_name)
        opened = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        with opened as handle:
            write(_Redacting(handle) if not binary and redact.active() else handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o666 & ~_UMASK)
        os.replace(tmp_name, path)
    except BaseException as exc:
        if tmp_name is not None:
            Path(tmp_name).unlink(missing_ok=True)
        _release(path)
        if isinstance(exc, OSError) and exc.errno in _NO_SPACE:
            raise InputError(f"no space left on device writing {path}") from None
        raise
    finally:
        with _reserved_lock:
            _writing.discard(tmp_name)
    with _reserved_lock:
        _reserved.discard(str(path))
    return path


def discard_unfinished() -> None:
    """Remove the names this process reserved and never wrote, and the temporary files it is still
    filling: called just before the process exits while a tool's thread is busy (SIGTERM, a timeout),
    so that no empty or half-written result is left behind."""
    with _reserved_lock:
        reserved, writing = list(_reserved), list(_writing)
    for name in reserved:
        _release(Path(name))
    for name in writing:
        Path(name).unlink(missing_ok=True)


class _Redacting:
    """A text handle whose ``write`` / ``writelines`` replace known secrets first (one piece at a time:
    every writer here hands over whole strings, lines or JSON tokens)."""

    def __init__(self, handle: IO[str]) -> None:
        self._handle = handle

    def write(self, text: str) -> int:
        return self._handle.write(redact.redact_text(text))

    def writelines(self, lines: Iterable[str]) -> None:
        self._handle.writelines(redact.redact_text(line) for line in lines)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


def _release(path: Path) -> None:
    """Remove ``path`` if this process reserved it and it is still the empty placeholder."""
    with _reserved_lock:
        if str(path) not in _reserved:
            return
        _reserved.discard(str(path))
    try:
        if path.is_file() and path.stat().st_size == 0:
            path.unlink()
    except OSError:
        pass


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically."""
    return atomic_write(path, lambda handle: handle.write(text))


def atomic_write_json(path: str | os.PathLike[str], data: Any, *, indent: int | None = 2) -> Path:
    """Write ``data`` as JSON to ``path`` atomically (UTF-8, non-ASCII kept as is)."""
    return atomic_write(path, lambda handle: json.dump(data, handle, ensure_ascii=False, indent=indent))


def compact_json(data: Any) -> str:
    """``data`` as compact JSON text, by orjson: several times faster than ``json.dumps`` on large
    results (a 14 MB all_trec file: 0.05 s against 0.2 s). orjson writes NaN and infinity as null,
    so give it finite numbers only."""
    import orjson

    return orjson.dumps(data).decode()


def atomic_write_jsonl(path: str | os.PathLike[str], rows: Iterable[Any]) -> Path:
    """Write one JSON document per line to ``path`` atomically."""

    def write(handle: IO[str]) -> None:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False))
            handle.write("\n")

    return atomic_write(path, write)


def result_path(save_path: str | os.PathLike[str], tool_name: str, suffix: str = ".json") -> Path:
    """Where a tool saves its result, reserved atomically and never overwriting an earlier one.

    ``save_path`` is either a directory (no suffix, or an existing directory): the file is
    ``<dir>/<tool_name>_<timestamp><suffix>``; or a file name ending ``suffix``, made unique with
    ``_1``, ``_2`` ... It must lie under the output root unless ``ULTRA_ALLOW_OUTSIDE_OUTPUT=1``.
    The path returned is absolute. A folder that cannot be created (a read-only working directory,
    a file where a folder should be) is an InputError saying where and what to do. Under
    ``ultra run --estimate`` the file goes to the estimate's scratch folder (``ultra_base.write_hooks``).
    """
    target = Path(os.path.abspath(check_save_path(save_path, tool_name, suffix)))
    scratch = write_hooks.estimate_scratch()
    if scratch is not None:
        target = scratch / "results" / (target.name if target.suffix and not target.is_dir() else "")
    try:
        if target.is_dir() or not target.suffix:
            return timestamped_path(target, tool_name, suffix)
        return _unique(target)
    except (FileExistsError, NotADirectoryError):
        raise InputError(
            f"save_path (or a folder in it) is an existing file, not a folder{_where_hint()}", path=str(target)
        ) from None
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        raise InputError(
            f"cannot write results here ({exc.strerror or exc}){_where_hint()}", path=str(target)
        ) from None


def _where_hint() -> str:
    """Where relative paths start, and how to change it (an agent host may start a server in ``/``)."""
    if os.environ.get(PROJECT_ROOT_ENV, "").strip():
        return f"; relative paths start at {PROJECT_ROOT_ENV}={os.getcwd()}"
    return (
        f"; relative paths start at the working directory {os.getcwd()}: start the server with "
        f"{PROJECT_ROOT_ENV}=<project folder> (`ultra mcp-config` writes it), or give save_path a writable folder"
    )


CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may read as the start of a formula


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell no spreadsheet evaluates (OWASP's advice on CSV injection): text that begins with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``; any other value is returned as it
    is (a negative number stays a number)."""
    return "'" + value if isinstance(value, str) and value.startswith(CSV_FORMULA_STARTS) else value


def csv_text(header: Iterable[Any], rows: Iterable[Iterable[Any]]) -> str:
    """CSV text (``\\n`` line ends): the header, then each row; every cell through ``csv_cell``. The one writer
    of every CSV file the project writes. A field holding a comma, a quote, a line feed or a carriage return is
    quoted (Python's csv module before 3.12 leaves a lone carriage return unquoted, which splits the row)."""
    lines = [",".join(_csv_field(csv_cell(cell)) for cell in row) for row in (header, *rows)]
    return "".join(line + "\n" for line in lines)


def _csv_field(cell: Any) -> str:
    text = "" if cell is None else str(cell)
    return '"' + text.replace('"', '""') + '"' if any(ch in text for ch in ',"\r\n') else text
