"""The files of a run folder, read within the project's size and depth limits (``ultra_kit.limits.json_files``,
``ultra_base.file_limits``): ``memory.json``, ``timings.json``, ``usage.json`` and ``parameters.yaml``.

A run folder may come from anywhere (a baseline downloaded from CI, a folder copied in), so nothing read here
may crash the command that reads it: a file that is too large, nested too deeply or malformed is an
``UnreadableRecord`` naming the file and the reason; each command decides whether to skip the folder
(``ultra runs``), or refuse it (``ultra gate``, ``ultra export``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_kit.limits.json_files import MAX_RECORD_BYTES, load_json_file

MEMORY = "memory.json"
PARAMETERS = "parameters.yaml"


class UnreadableRecord(InputError):
    """A run folder's file that exists but cannot be read: its message names the file and the reason."""


def read_memory(folder: Path) -> dict[str, Any] | None:
    """The run's final variables (``memory.json``); None when the folder has none (the run did not finish)."""
    path = folder / MEMORY
    if not path.exists() and not path.is_symlink():
        return None
    memory = read_json_record(path, "run memory")
    if not isinstance(memory, dict):
        raise UnreadableRecord(f"not a mapping of variables (a {type(memory).__name__})", path=str(path))
    return memory


def read_json_record(path: Path, kind: str) -> Any:
    """A JSON file of a run folder within the limits; ``UnreadableRecord`` naming it and the reason otherwise."""
    try:
        return load_json_file(path, kind=kind, max_bytes=MAX_RECORD_BYTES)
    except InputError as exc:
        raise UnreadableRecord(_reason(exc), path=str(path)) from None


def optional_json_record(path: Path, kind: str) -> Any:
    """``read_json_record``, or None when the file is missing or unreadable (``timings.json``, ``usage.json``:
    what a listing can do without)."""
    try:
        return read_json_record(path, kind)
    except UnreadableRecord:
        return None


def read_parameters(folder: Path) -> dict[str, Any]:
    """The run's ``parameters.yaml`` as written (``{}`` when missing); ``UnreadableRecord`` when it is too large,
    nested too deeply, malformed or not a mapping."""
    import yaml

    from ultra_base.file_limits import load_limited_yaml

    path = folder / PARAMETERS
    if not path.exists():
        return {}
    try:
        data = load_limited_yaml(path, kind="parameter")
    except InputError as exc:
        raise UnreadableRecord(_reason(exc), path=str(path)) from None
    except yaml.YAMLError as exc:
        raise UnreadableRecord(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", path=str(path)) from None
    except RecursionError:  # the loader's own recursion, past the shape check
        raise UnreadableRecord("nested too deeply", path=str(path)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UnreadableRecord(f"not a mapping of server settings (a {type(data).__name__})", path=str(path))
    return data


def _reason(exc: InputError) -> str:
    """An InputError's message without the path it starts with (the caller names the file once)."""
    text = str(exc)
    if exc.path is not None:
        prefix = f"{exc.path}:{exc.line}: " if exc.line is not None else f"{exc.path}: "
        text = text.removeprefix(prefix)
    return f"line {exc.line}: {text}" if exc.line is not None and exc.path is not None else text
