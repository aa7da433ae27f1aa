"""Caps on the counts that multiply a tool's work: judgments per item, jury members, rubrics per call,
resamples of a bootstrap or randomisation test, questions per kind.

Each server's caps are the ``caps:`` mapping of its ``servers/<name>/parameter.yaml`` (a server outside
``servers/``, named in a pipeline by its path: of its own ``parameter.yaml``, ``caps_file`` at ``ultra build``, and
the file its tools run with: ``ultra_kit.settings.parameter_path``). No tool has a
parameter named ``caps``, so neither an MCP caller nor a pipeline's parameter file can raise them: only
whoever runs the server, by editing that file. A count over its cap is refused before any work starts,
with a message naming the value, the cap and where to raise it. ``count`` also refuses what is not a
count at all (``1.5``, ``true``, NaN, ``"3"``); a count read from ``${VAR}`` (``ultra_base.variable_counts``) is
named by that reference in every message, never by its value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_base.variable_counts import whole_count
from ultra_kit.settings import CAPS_KEY, load_caps, parameter_path, shown_file


def cap(server: str, name: str, caps_file: str | Path | None = None) -> int:
    """The cap ``caps.<name>`` of ``servers/<server>/parameter.yaml`` (inside a tool call, of its server's own:
    ``ultra_kit.settings.parameter_path``; or of ``caps_file``, the parameter.yaml of a server outside ``servers/``
    that ``ultra build`` checks); InputError if it is missing or not a count."""
    value = load_caps(caps_file or parameter_path(server)).get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{CAPS_KEY}.{name} must be a whole number >= 1, got {value!r}", path=_file(server, caps_file))
    return value


def count(value: Any, what: str, *, minimum: int = 0) -> int:
    """``value`` as a whole number >= ``minimum``; InputError naming ``what`` otherwise (a bool, a float with a
    fraction, NaN, infinity or a string is not a count: ``true`` is not 1)."""
    value = whole_count(value, what, at_least=f" >= {minimum}")  # a ${VAR} expand_item left as written: by name
    if value < minimum:
        raise InputError(f"{what} must be >= {minimum}, got {value}")
    return value


def capped(
    value: Any, what: str, *, server: str, name: str, minimum: int = 0, caps_file: str | Path | None = None
) -> int:
    """``count(value, what)`` that is also at most the server's ``caps.<name>`` (``cap``); over it, an InputError
    naming the cap and the file that sets it (the work is never started)."""
    number = count(value, what, minimum=minimum)
    limit = cap(server, name, caps_file)
    if number > limit:
        raise InputError(
            f"{what} {number:,} is more than the cap {CAPS_KEY}.{name} = {limit:,} of the {server} server; it "
            f"multiplies the work of the call. Use a smaller value, or raise the cap in {_file(server, caps_file)}"
        )
    return number


def _file(server: str, caps_file: str | Path | None = None) -> str:
    if caps_file is not None:
        return str(caps_file)
    path = parameter_path(server)
    return shown_file(path) if path.parent.is_dir() else server
