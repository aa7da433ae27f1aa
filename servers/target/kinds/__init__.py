"""The kinds of target: name -> the module that opens an ``Asker`` for it (``kinds/base.py``), imported lazily.

A kind module defines ``open_asker(target, context)``, ``KEYS`` (the ``target`` keys it reads besides those
of every kind) and ``SUMMARY`` (one line for the docs). Modules are imported only when a run uses them, so a
kind whose library is missing (an extra) or whose module is not there fails with a message, not a crash.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from types import ModuleType

from ultra_base.errors import InputError
from ultra_base.registry import Registry


@dataclass(frozen=True)
class Kind:
    """One kind of target: its module and the extra its library comes from ('' = core)."""

    name: str
    module: str
    extra: str = ""


KINDS: Registry[Kind] = Registry(
    "target kind",
    (
        Kind("http", "servers.target.kinds.http"),
        Kind("openai", "servers.target.kinds.openai"),
        Kind("python", "servers.target.kinds.python"),
        Kind("langchain", "servers.target.kinds.langchain", extra="langchain"),
        Kind("llamaindex", "servers.target.kinds.llamaindex", extra="llamaindex"),
        Kind("mcp", "servers.target.kinds.mcp"),
    ),
    choices={"extra": ("", "langchain", "llamaindex")},
)

# The keys every kind reads (the runner's), and those that only a parameter file may set (never a tool
# call over MCP): where requests go, what they carry and which code runs.
COMMON_KEYS = (
    "kind", "settings", "timeout", "max_workers", "rate_limit", "max_retries", "history", "max_failed_fraction",
    "target_cache", "max_answer_chars", "max_response_bytes", "max_json_depth",
)  # fmt: skip
PINNED_KEYS = (
    "kind", "url", "method", "headers", "base_url", "api_key", "function", "runnable", "engine", "command", "tool",
    "env",  # the mcp kind's server environment (PYTHONPATH, LD_PRELOAD ... decide which code runs)
    "max_response_bytes", "max_json_depth", "max_workers", "rate_limit",  # limits an agent may not raise
)  # fmt: skip


def kind_module(name: str) -> ModuleType:
    """The module of kind ``name``; an unknown kind, or one not available here, is an InputError saying why."""
    kind = KINDS.get(name)
    if kind is None:
        raise InputError(f"target.kind {name!r} is not a kind of target; the kinds: {', '.join(KINDS)}")
    try:
        return importlib.import_module(kind.module)
    except ModuleNotFoundError as exc:
        if exc.name == kind.module:
            raise InputError(
                f"target.kind {name!r} is not available in this installation ({kind.module} is missing); "
                f"the kinds available here: {', '.join(available())}"
            ) from None
        hint = f": pip install 'ultra-eval[{kind.extra}]'" if kind.extra else ""
        raise InputError(f"target.kind {name!r} needs the package {exc.name!r}{hint}") from None


def available() -> list[str]:
    """The kinds whose module this installation has."""
    return [name for name, kind in KINDS.items() if importlib.util.find_spec(kind.module) is not None]


def kinds_markdown() -> str:
    """The table of kinds for the docs: name, the keys it reads, what it calls."""
    rows = ["| kind | keys | what it calls |", "|---|---|---|"]
    for name in KINDS:
        try:
            module = kind_module(name)
        except InputError:
            rows.append(f"| `{name}` | (not in this installation) | |")
            continue
        keys = ", ".join(f"`{key}`" for key in module.KEYS)
        rows.append(f"| `{name}` | {keys} | {module.SUMMARY} |")
    return "\n".join(rows)
