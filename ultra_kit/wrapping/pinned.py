"""Settings keys that only a parameter file may set: where a tool sends requests and which code it runs.

A tool marks them with ``@pinned(setting, keys)`` (the target server: ``target.url``, ``headers``,
``function`` ...). A call over MCP (an agent host, ``ultra call --stdio``: a caller who may be following a
prompt injection) that gives one of them a value is refused unless the value is the one a parameter file
holds: the server's ``parameter.yaml``, or the run's parameter file that ``ultra run`` names in
``$ULTRA_RUN_PARAMETERS`` for the server ``$ULTRA_SERVER_ALIAS`` when it starts the server (the environment
a server starts in is the user's, never a tool argument's). ``${VAR}`` references in a file's value match
the value they expand to. Calls in process (``ultra run``, ``ultra call``) are the user's own and pass.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError

RUN_PARAMETERS_ENV = "ULTRA_RUN_PARAMETERS"  # the parameter file of the run that started this server
SERVER_ALIAS_ENV = "ULTRA_SERVER_ALIAS"  # this server's alias in that file


def pinned(setting: str, keys: Iterable[str]) -> Callable:
    """Decorator: the ``keys`` of the mapping setting ``setting`` come from a parameter file only."""

    def mark(fn: Callable) -> Callable:
        pins = dict(getattr(fn, "__pinned__", {}))
        pins[setting] = tuple(keys)
        fn.__pinned__ = pins
        return fn

    return mark


def check_pinned(given: dict[str, Any], pins: dict[str, tuple[str, ...]], defaults: dict[str, Any], *,
                 source: str, in_process: bool) -> None:  # fmt: skip
    """Refuse (over MCP) a call that gives a pinned key a value no parameter file holds."""
    if in_process or not pins:
        return
    for setting, keys in pins.items():
        value = given.get(setting)
        if not isinstance(value, dict):
            continue
        allowed = _file_values(setting, defaults)
        changed = [key for key in keys if key in value and not _matches(value[key], allowed, key)]
        if changed:
            files = " or ".join([source, *([os.environ[RUN_PARAMETERS_ENV]] if _run_file() else [])])
            raise InputError(
                f"refused: {', '.join(f'{setting}.{key}' for key in changed)} may be set only in a parameter file "
                f"({files}), not by a tool call over MCP: it decides where requests go and which code runs. "
                f"Set it there, or run the call in process (`ultra run`, `ultra call`)"
            )


def _matches(value: Any, allowed: list[dict[str, Any]], key: str) -> bool:
    from ultra_kit.settings import expand_env

    for mapping in allowed:
        if key not in mapping:
            continue
        written = mapping[key]
        if value == written:
            return True
        try:
            if value == expand_env(written):
                return True
        except InputError:  # a variable the server's environment lacks: it cannot match
            continue
    return False


def _file_values(setting: str, defaults: dict[str, Any]) -> list[dict[str, Any]]:
    """The mappings of ``setting`` that the parameter files hold: parameter.yaml's, and the run file's."""
    found = [defaults[setting]] if isinstance(defaults.get(setting), dict) else []
    run_file = _run_file()
    if run_file is not None:
        from ultra_kit.settings import load_parameter_file

        try:
            values = load_parameter_file(run_file).get(os.environ.get(SERVER_ALIAS_ENV, ""), {})
        except InputError:
            values = {}
        if isinstance(values, dict) and isinstance(values.get(setting), dict):
            found.append(values[setting])
    return found


def _run_file() -> Path | None:
    path = os.environ.get(RUN_PARAMETERS_ENV, "").strip()
    return Path(path) if path and Path(path).is_file() else None
