"""Importing a target's code (``module:attribute`` or ``path/to/file.py:attribute``) from the read roots only.

Shared by the python, langchain and llamaindex kinds. A module is looked up on the read roots (the project
folder, ``output/`` and ``$ULTRA_READ_ROOTS``; ``ultra_base.errors.read_roots``) before anything is imported,
so a name such as ``os:system`` or a package installed elsewhere is refused unrun.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from typing import Any

from ultra_base.environment import ALLOW_OUTSIDE_READS_ENV, READ_ROOTS_ENV
from ultra_base.errors import InputError, readable_path


def load_attribute(reference: Any, *, setting: str, roots: tuple[Path, ...]) -> Any:
    """The object ``reference`` names; an InputError saying what is wrong otherwise."""
    if not isinstance(reference, str) or ":" not in reference.strip():
        raise InputError(f"{setting} must be module:name or path/to/file.py:name, got {reference!r}")
    where, _, name = reference.strip().rpartition(":")
    if not name.isidentifier() and not all(part.isidentifier() for part in name.split(".")):
        raise InputError(f"{setting}: {name!r} is not a Python name")
    module = _file_module(where, setting) if where.endswith(".py") else _root_module(where, setting, roots)
    found: Any = module
    for part in name.split("."):
        if not hasattr(found, part):
            raise InputError(f"{setting}: {where} has no {name!r}")
        found = getattr(found, part)
    return found


def _file_module(path: str, setting: str) -> Any:
    file = readable_path(path, setting=setting).resolve()
    if not file.is_file():
        raise InputError(f"{setting}: no file {path}")
    name = f"ultra_target_{file.stem}_{abs(hash(str(file))) % 10**8}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise InputError(f"{setting}: {path} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with _on_path(file.parent):
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - the user's module failed as it was imported
            del sys.modules[name]
            raise InputError(f"{setting}: importing {path} raised {type(exc).__name__}: {exc}") from None
    return module


def _root_module(dotted: str, setting: str, given_roots: tuple[Path, ...]) -> Any:
    if not all(part.isidentifier() for part in dotted.split(".")):
        raise InputError(f"{setting}: {dotted!r} is not a module name")
    top = dotted.split(".")[0]
    roots = [str(root) for root in given_roots]
    spec = importlib.machinery.PathFinder.find_spec(top, roots)
    if spec is None or not (spec.origin or spec.submodule_search_locations):
        raise InputError(
            f"{setting}: no module {top!r} in the folders a target may be imported from ({', '.join(roots)}); "
            f"targets are imported only from the project folder and {READ_ROOTS_ENV}"
        )
    location = Path(spec.origin or list(spec.submodule_search_locations)[0]).resolve()
    root = next(Path(r) for r in roots if location.is_relative_to(r))
    loaded = sys.modules.get(top)
    if loaded is not None and not _inside(loaded, root):
        raise InputError(
            f"{setting}: the module name {top!r} is already taken by {getattr(loaded, '__file__', 'a built-in')}; "
            "rename your module"
        )
    with _on_path(root):
        try:
            module = importlib.import_module(dotted)
        except ModuleNotFoundError as exc:
            raise InputError(f"{setting}: importing {dotted} failed: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the user's module failed as it was imported
            raise InputError(f"{setting}: importing {dotted} raised {type(exc).__name__}: {exc}") from None
    if not _inside(module, root):
        raise InputError(f"{setting}: {dotted} was not imported from {root} ({ALLOW_OUTSIDE_READS_ENV} aside)")
    return module


def _inside(module: Any, root: Path) -> bool:
    file = getattr(module, "__file__", None)
    return file is not None and Path(file).resolve().is_relative_to(root)


class _on_path:  # noqa: N801 - used as a context manager
    """``folder`` first on ``sys.path`` while the module is imported."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)

    def __enter__(self) -> None:
        sys.path.insert(0, self.folder)

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(ValueError):
            sys.path.remove(self.folder)
