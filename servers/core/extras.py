"""Lazy imports of optional dependencies with an error that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from servers.core.errors import InputError


def require(module: str, *, extra: str) -> ModuleType:
    """Import ``module`` or raise InputError telling which extra of ultra-eval provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InputError(
            f"this needs the optional package '{module.split('.')[0]}' ({exc}); "
            f"install it with: pip install -e '.[{extra}]'"
        ) from None
