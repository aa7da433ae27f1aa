"""The error a user can act on, raised by pure code without any MCP import, and the two checks the
libraries share: a missing optional package, a missing input file."""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType


class InputError(ValueError):
    """Bad input from a user: the message names the file, the line and what was expected.

    Pure functions raise it; the server factory turns it into an MCP ``ToolError`` and the
    ``ultra`` client prints it without a traceback.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name most like ``name`` (difflib), or None if none is close."""
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
    return matches[0] if matches else None


def unknown_names_message(unknown: Iterable[str], known: Iterable[str], *, owner: str, what: str = "parameter") -> str:
    """``'evaluate_trec' has no parameter 'k' (did you mean 'ks'?); its parameters: ['run_path', ...]``.

    ``owner`` is what the ``known`` names belong to (a tool, a mapping setting), ``what`` their kind.
    """
    known = list(known)
    names = []
    for name in unknown:
        near = closest(name, known)
        names.append(f"'{name}' (did you mean '{near}'?)" if near else f"'{name}'")
    plural = "s" if len(names) > 1 else ""
    return f"'{owner}' has no {what}{plural} {', '.join(names)}; its {what}s: {known}"


def require(module: str, *, extra: str) -> ModuleType:
    """Import ``module`` or raise InputError telling which extra of ultra-eval provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InputError(
            f"this needs the optional package '{module.split('.')[0]}' ({exc}); "
            f"install it with: pip install -e '.[{extra}]'"
        ) from None


def existing_file(path: str | os.PathLike[str], *, what: str = "input file") -> Path:
    """Return ``path`` as a Path, or raise InputError if it is missing or not a regular file."""
    file = Path(path).expanduser()
    if not file.exists():
        raise InputError(f"{what} not found; check the path (relative paths start at {Path.cwd()})", path=str(path))
    if not file.is_file():
        raise InputError(f"{what} is not a regular file", path=str(path))
    return file
