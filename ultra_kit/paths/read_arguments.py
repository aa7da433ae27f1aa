"""The arguments of a tool that name files or folders it reads, found by name and checked against the
read roots (``ultra_base.errors.readable_path``) before the tool starts."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ultra_base.environment import OUTPUT_ROOT
from ultra_base.errors import readable_path

_READ_NAME = re.compile(r"(path|_paths|_dir|_dirs|_files)$")  # a parameter naming files or folders ...
_WRITE_NAMES = ("save_path", "out_dir")  # ... that a tool reads, unless it names where results go


def read_parameters(names: Iterable[str], settings: dict[str, Any]) -> dict[str, str | None]:
    """{parameter: None, or the key of a mapping setting} of the ``names`` that name input files or folders.

    Found by name (``*path``, ``*_paths``, ``*_dir``, ``*_dirs``, ``*_files``, and the ``path`` key of a
    mapping setting such as ``benchmark``), less where results go: ``save_path``, ``out_dir`` and
    settings whose default lies under ``output/`` (an index, a query set: confined as writes).
    """
    found: dict[str, str | None] = {}
    for name in names:
        default = settings.get(name)
        under_output = isinstance(default, str) and Path(default).parts[:1] == (OUTPUT_ROOT,)
        if isinstance(default, dict) and "path" in default:
            found[name] = "path"
        elif _READ_NAME.search(name) and name not in _WRITE_NAMES and not under_output:
            found[name] = None
    return found


def check_read_arguments(arguments: dict[str, Any], parameters: dict[str, str | None]) -> dict[str, Any]:
    """Every path among ``arguments`` of the ``parameters`` (``read_parameters``; a list's items, a {name: path}
    mapping's values) checked by ``readable_path`` before the tool starts (after ``${VAR}`` expansion): the first
    one outside the read roots is an InputError naming its parameter. Returns ``arguments``."""
    for name, key in parameters.items():
        value = arguments.get(name)
        if key is not None:
            value = value.get(key) if isinstance(value, dict) else None
        for item in value if isinstance(value, list) else value.values() if isinstance(value, dict) else [value]:
            if isinstance(item, str) and item.strip():
                readable_path(item, setting=f"{name}.{key}" if key else name)
    return arguments
