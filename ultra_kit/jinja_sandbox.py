"""Jinja2's sandbox with resource limits: a deadline per prompt and bounded sizes.

The stock ``SandboxedEnvironment`` stops a template from reaching Python internals but not from
running forever or filling memory. Here every loop iteration, call, filter and arithmetic
operator checks a per-render deadline, strings and lists a template builds are bounded before they
are built (``"x" * n``, ``"%9999999999d"``, ``center(n)``), and the output is counted as it is
produced. Going past a limit raises ``RenderLimitError``.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from numbers import Number
from typing import Any

from jinja2 import nodes
from jinja2.sandbox import SandboxedEnvironment

MAX_PROMPT_CHARS = 4_000_000  # one rendered prompt, and any string or list a template builds
RENDER_SECONDS = 5.0  # one prompt's rendering deadline
MAX_POWER = 1024  # largest integer exponent of ``**``
LOOP_GUARD = "ultra_loop_guard"  # filter wrapped around every for loop's iterable
_WIDTH = re.compile(r"%[#0 +\-]*(\d+)|%[#0 +\-]*\d*\.(\d+)|\{[^{}]*:[^{}]*?(\d+)[^{}]*\}")
_state = threading.local()


class RenderLimitError(Exception):
    """A template went past a rendering limit (time or size)."""


def _tick() -> None:
    deadline = getattr(_state, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise RenderLimitError(f"rendering one prompt took longer than {RENDER_SECONDS:g} s (a loop too long?)")


def _check_size(value: Any) -> Any:
    if isinstance(value, (str, list, tuple, dict)) and len(value) > MAX_PROMPT_CHARS:
        raise RenderLimitError(f"the template built a value longer than {MAX_PROMPT_CHARS} items or characters")
    return value


def _check_numbers(args: Iterable[Any]) -> None:
    for arg in args:
        if isinstance(arg, int) and not isinstance(arg, bool) and abs(arg) > MAX_PROMPT_CHARS:
            raise RenderLimitError(f"the number {arg} is larger than a template may use ({MAX_PROMPT_CHARS})")


def _check_format(text: Any) -> None:
    """A format string whose widths or precisions would build a huge string is refused before use."""
    if not isinstance(text, str):
        return
    widths = (n for match in _WIDTH.finditer(text) for n in match.groups() if n)
    if any(len(n) > 6 and int(n) > MAX_PROMPT_CHARS for n in widths):
        raise RenderLimitError(f"a format width larger than {MAX_PROMPT_CHARS} characters")


def _guard_loop(iterable: Any) -> Iterator[Any]:
    for item in iterable:
        _tick()
        yield item


def _limited_filter(function: Any) -> Any:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _tick()
        _check_numbers(args)
        _check_numbers(kwargs.values())
        if function.__name__ == "do_format" and args:
            _check_format(args[0])
        return _check_size(function(*args, **kwargs))

    return wrapper


class LimitedSandbox(SandboxedEnvironment):
    """The sandbox with a deadline and size bounds (see the module docstring)."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters = {name: _limited_filter(f) for name, f in self.filters.items()}
        self.filters[LOOP_GUARD] = _guard_loop

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, LOOP_GUARD, [], [], None, None, lineno=loop.lineno)
        return tree

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _tick()
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                sized = isinstance(seq, (str, list, tuple)) and isinstance(count, int)
                if sized and len(seq) * count > MAX_PROMPT_CHARS:
                    raise RenderLimitError(f"the template built a value longer than {MAX_PROMPT_CHARS} characters")
        elif operator == "**":
            if isinstance(right, Number) and not isinstance(right, bool) and abs(right) > MAX_POWER:  # type: ignore[arg-type]
                raise RenderLimitError(f"an exponent larger than {MAX_POWER}")
        elif operator == "%":
            _check_format(left)
        return _check_size(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        _tick()
        _check_numbers(args)
        _check_numbers(kwargs.values())
        target = getattr(__obj, "__wrapped__", __obj)  # the sandbox wraps str.format
        if getattr(target, "__name__", "") in ("format", "format_map"):
            _check_format(getattr(target, "__self__", None))
        return _check_size(super().call(__context, __obj, *args, **kwargs))

    def format_string(self, s: str, args: Any, kwargs: Any, format_func: Any = None) -> str:
        _check_format(s)
        return _check_size(super().format_string(s, args, kwargs, format_func))


def limited_environment(**options: Any) -> LimitedSandbox:
    """A new sandbox with limits (``options`` as for ``jinja2.Environment``)."""
    return LimitedSandbox(**options)


def render_limited(template: Any, variables: Mapping[str, Any]) -> str:
    """Render ``template`` with a deadline and an output bound; raises RenderLimitError past them."""
    previous = getattr(_state, "deadline", None)
    _state.deadline = time.monotonic() + RENDER_SECONDS
    try:
        parts: list[str] = []
        size = 0
        for chunk in template.generate(**variables):
            size += len(chunk)
            if size > MAX_PROMPT_CHARS:
                raise RenderLimitError(f"the prompt is longer than {MAX_PROMPT_CHARS} characters")
            _tick()
            parts.append(chunk)
        return "".join(parts)
    finally:
        _state.deadline = previous
