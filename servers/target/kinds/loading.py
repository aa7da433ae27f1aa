"""The object a ``module:attribute`` or ``path/to/file.py:attribute`` setting names, imported only from the read roots.

A python, langchain or llamaindex target is code the user wrote; it is imported only when its file lies in
a read root (the project folder, ``output/``, ``$ULTRA_READ_ROOTS``), never from an installed package a
tool argument could name. The setting comes from the parameter file; the check holds all the same.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ultra_kit.errors import InputError


def load_attribute(reference: object, *, setting: str, read_roots: Sequence[Path]) -> Any:
    """The attribute ``reference`` (``module:attribute`` or ``file.py:attribute``) names, its module in a read root."""
    if not isinstance(reference, str) or reference.count(":") != 1 or not all(reference.split(":")):
        raise InputError(f"{setting} must be 'module:attribute' or 'path/to/file.py:attribute', got {reference!r}")
    where, attribute = (part.strip() for part in reference.split(":"))
    roots = tuple(Path(root).resolve() for root in read_roots)
    module = _load_file(where, setting, roots) if where.endswith(".py") else _load_module(where, setting, roots)
    found: Any = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise InputError(f"{setting}: {where} has no attribute {attribute!r}")
        found = getattr(found, part)
    return found


def _inside(file: Path, roots: Sequence[Path]) -> Path | None:
    """The read root ``file`` lies in, or None."""
    resolved = file.resolve()
    return next((root for root in roots if resolved.is_relative_to(root)), None)


def _refused(setting: str, what: str, roots: Sequence[Path]) -> InputError:
    listed = ", ".join(str(root) for root in roots)
    return InputError(
        f"{setting}: {what} is not in a folder tools may read ({listed}); targets are imported only from there. "
        "Add its folder to ULTRA_READ_ROOTS on the command line"
    )


def _load_file(where: str, setting: str, roots: Sequence[Path]) -> Any:
    file = Path(where).expanduser()
    if _inside(file, roots) is None:
        raise _refused(setting, f"{file.resolve()}", roots)
    if not file.is_file():
        raise InputError(f"{setting}: {file} not found (relative paths start at {Path.cwd()})")
    name = "ultra_target_" + hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file.resolve())
    if spec is None or spec.loader is None:
        raise InputError(f"{setting}: {file} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(file.resolve().parent)
    if folder not in sys.path:  # its own sibling modules import as they do when it runs as a script
        sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise InputError(f"{setting}: importing {file} failed: {type(exc).__name__}: {exc}") from None
    return module


def _load_module(where: str, setting: str, roots: Sequence[Path]) -> Any:
    top = where.split(".")[0]
    root = next((r for r in roots if (r / f"{top}.py").is_file() or (r / top).is_dir()), None)
    if root is None:
        raise _refused(setting, f"module {where!r}", roots)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(where)
    except ImportError as exc:
        raise InputError(f"{setting}: cannot import {where!r} from {root} ({exc})") from None
    except Exception as exc:
        raise InputError(f"{setting}: importing {where!r} failed: {type(exc).__name__}: {exc}") from None
    file = getattr(module, "__file__", None)
    if file is None or _inside(Path(file), roots) is None:  # a same-named installed package came first
        raise _refused(setting, f"module {where!r} ({file or 'no file'})", roots)
    return module
