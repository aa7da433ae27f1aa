"""The project folder a server works in, and tool results whose relative paths are made absolute.

A server started with ``ULTRA_HOME=<project folder>`` (``ultra mcp-config`` writes it) works in that
folder (``enter_project_root``): relative paths, the defaults of ``parameter.yaml`` (``data/...``)
included, resolve against it, whatever working directory the agent host started it in (Claude
Desktop: ``/``). What a tool returns names absolute paths (``absolute_paths``), usable from anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ultra_base.environment import PROJECT_ROOT_ENV


def enter_project_root() -> Path | None:
    """Make ``$ULTRA_HOME`` the working directory of this (server) process; the folder, or None if unset.

    Called when a server starts serving, before any tool runs: every relative path a tool reads or
    writes then resolves against the project folder. A folder that does not exist is an error.
    """
    home = os.environ.get(PROJECT_ROOT_ENV, "").strip()
    if not home:
        return None
    folder = Path(home).expanduser()
    try:
        os.chdir(folder)
    except OSError as exc:
        raise SystemExit(f"{PROJECT_ROOT_ENV}={home}: cannot work in that folder ({exc.strerror or exc})") from None
    return Path.cwd()


_PATH_KEYS = ("path", "_path", "_paths")


def absolute_paths(result: Any, depth: int = 0) -> Any:
    """``result`` with every relative path under a key ``path``, ``*_path`` or ``*_paths`` made absolute.

    Only strings that name an existing file or folder change (a URL, a model name or ``""`` stay);
    mappings are followed 3 levels deep. What a tool returns is then usable from any directory.
    """
    if not isinstance(result, dict) or depth > 3:
        return result
    changed = {}
    for key, value in result.items():
        if isinstance(key, str) and key.endswith(_PATH_KEYS):
            if isinstance(value, str):
                value = _absolute(value)
            elif isinstance(value, list) and all(isinstance(item, str) for item in value):
                value = [_absolute(item) for item in value]
        elif isinstance(value, dict):
            value = absolute_paths(value, depth + 1)
        changed[key] = value
    return changed


def _absolute(value: str) -> str:
    if not value or len(value) > 4096 or "\n" in value or "://" in value or os.path.isabs(value):
        return value
    try:
        return os.path.abspath(value) if os.path.exists(value) else value
    except (OSError, ValueError):
        return value
