"""The error a user can act on, raised by pure code without any MCP import, and the checks the
libraries share: a missing optional package, a missing input file, a file outside the read roots.

While a tool runs (``confined_reads``, which the server kit wraps around every tool call; a stdio
server confines its whole process), every input file and folder must resolve, symlinks included,
inside a read root: the project folder (``$ULTRA_HOME``, else the working directory unless that is
``/`` or the home folder), the output folder (``output/``) and the folders listed in
``$ULTRA_READ_ROOTS``. ``ULTRA_ALLOW_OUTSIDE_READS=1`` lifts the rule. The Python libraries and
``ultra trec_eval`` called directly read what they are given."""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from types import ModuleType

from ultra_base.environment import ALLOW_OUTSIDE_READS_ENV, OUTPUT_ROOT, PROJECT_ROOT_ENV, READ_ROOTS_ENV


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


def shown(value: object) -> str:
    """A setting's value as a message quotes it: ``repr``, but a boolean as YAML and JSON spell it (``true``)."""
    return str(value).lower() if isinstance(value, bool) else repr(value)


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
    """Return ``path`` as a Path, or raise InputError if it is missing, not a regular file, or (while a
    tool runs) outside the read roots (``readable_path``)."""
    file = readable_path(path, setting=what)
    if not file.exists():
        raise InputError(f"{what} not found; check the path (relative paths start at {Path.cwd()})", path=str(path))
    if not file.is_file():
        raise InputError(f"{what} is not a regular file", path=str(path))
    return file


_confined: ContextVar[bool] = ContextVar("confined_reads", default=False)
_process_confined = False


@contextmanager
def confined_reads() -> Iterator[None]:
    """Inside the block (a tool call), ``readable_path`` refuses paths outside the read roots."""
    token = _confined.set(True)
    try:
        yield
    finally:
        _confined.reset(token)


def confine_process_reads() -> None:
    """Confine reads in every thread of this process from now on (a server serving an MCP client)."""
    global _process_confined
    _process_confined = True


def reads_confined() -> bool:
    """True while reads are confined (a tool call, or a serving process) and the user has not lifted it."""
    if os.environ.get(ALLOW_OUTSIDE_READS_ENV, "").strip() == "1":
        return False
    return _process_confined or _confined.get()


def read_roots() -> list[Path]:
    """The folders tools may read, resolved: the project folder, the output folder, ``$ULTRA_READ_ROOTS``.

    The project folder is ``$ULTRA_HOME``, else the working directory, unless that is the file
    system root or the home folder (an agent host may start a server in ``/``).
    """
    home = os.environ.get(PROJECT_ROOT_ENV, "").strip()
    roots = [Path(home).expanduser().resolve()] if home else []
    cwd = Path.cwd().resolve()
    if not home and cwd != Path(cwd.anchor) and cwd != _home_folder():
        roots.append(cwd)
    roots.append(Path(OUTPUT_ROOT).resolve())
    for entry in os.environ.get(READ_ROOTS_ENV, "").split(os.pathsep):
        if entry.strip():
            roots.append(Path(entry.strip()).expanduser().resolve())
    return list(dict.fromkeys(roots))


def add_read_root(folder: str | os.PathLike[str]) -> None:
    """Let the tools of this process, and the servers it starts, read ``folder`` too (appended to
    ``$ULTRA_READ_ROOTS``): what the user named on the command line, never a tool argument."""
    current = os.environ.get(READ_ROOTS_ENV, "")
    os.environ[READ_ROOTS_ENV] = os.pathsep.join(part for part in (current, str(Path(folder).resolve())) if part)


def _home_folder() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError, OSError):  # no HOME and no password entry
        return None


def readable_path(path: str | os.PathLike[str], *, setting: str) -> Path:
    """``path`` (``~`` expanded) if a tool may read it; while reads are confined, an InputError unless it
    resolves (``..`` and symlinks followed) inside a read root (``read_roots``). Checked before anything
    is opened; the message names ``setting``, the resolved path and the two ways to allow it."""
    try:
        target = Path(path).expanduser()
        resolved = target.resolve() if reads_confined() else target
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a loop of links, ~nobody
        raise InputError(f"{setting} is not a usable path ({exc})") from None
    if not reads_confined():
        return target
    roots = read_roots()
    if any(resolved.is_relative_to(root) for root in roots):
        return target
    listed = os.pathsep.join(str(root) for root in roots)
    raise InputError(
        f"{setting} resolves to {resolved}, outside the folders tools may read ({listed}); it was not read. "
        f"Add its folder to {READ_ROOTS_ENV} (e.g. {READ_ROOTS_ENV}={resolved.parent}), or set "
        f"{ALLOW_OUTSIDE_READS_ENV}=1 to let tools read any file"
    )
