"""Request templates: a ``body`` (or ``arguments``) mapping or list whose string values are Jinja templates,
rendered value by value in the shared sandbox (``ultra_kit.jinja_sandbox``), so JSON escaping is never the
user's problem; a string is rendered as a whole. Variables: ``question``, ``id``, ``history``, ``settings``.

A value that is exactly one variable (``"{{ history }}"``, ``"{{ settings.top_k }}"``) sends the value itself,
a list or a number, not its text. Both it and a string with no Jinja markup in it are read without Jinja; the
other strings are compiled once, when the target is opened.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from servers.target.kinds.base import TurnRequest
from ultra_base.errors import InputError

_WHOLE_VARIABLE = re.compile(r"^\{\{\s*(question|id|history|settings)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}$")
_MARKUP = ("{{", "{%", "{#", "\n", "\r")  # a string with none of these renders as itself (Jinja rewrites newlines)


class _Variable:
    """A value that is one variable: sent as the value itself."""

    def __init__(self, name: str, keys: str) -> None:
        self.name, self.keys = name, [key for key in keys.split(".") if key]

    def value(self, variables: dict[str, Any], where: str) -> Any:
        found = variables[self.name]
        for key in self.keys:
            if not isinstance(found, Mapping) or key not in found:
                raise InputError(f"{where}: {self.name}.{'.'.join(self.keys)} is not set (target.settings?)")
            found = found[key]
        return found


class RequestTemplate:
    """A compiled body: the same shape as written, each string a compiled template."""

    def __init__(self, value: Any, *, setting: str) -> None:
        import jinja2

        from ultra_kit.jinja_sandbox import limited_environment

        self.setting = setting
        self._environment = limited_environment(undefined=jinja2.StrictUndefined, autoescape=False)
        self._compiled = self._compile(value, setting)

    def _compile(self, value: Any, where: str) -> Any:
        import jinja2

        if isinstance(value, str) and (whole := _WHOLE_VARIABLE.match(value.strip())):
            return _Variable(whole[1], whole[2])
        if isinstance(value, str) and not any(mark in value for mark in _MARKUP):
            return value
        if isinstance(value, str):
            try:
                return self._environment.from_string(value)
            except jinja2.TemplateSyntaxError as exc:
                raise InputError(f"{where} is not a valid Jinja template: {exc.message} (line {exc.lineno})") from None
        if isinstance(value, Mapping):
            return {str(key): self._compile(item, f"{where}.{key}") for key, item in value.items()}
        if isinstance(value, list):
            return [self._compile(item, f"{where}[{i}]") for i, item in enumerate(value)]
        return value

    def render(self, request: TurnRequest) -> Any:
        """The body of ``request``: strings rendered, other values as written."""
        variables = {
            "question": request.question,
            "id": request.id,
            "history": [dict(turn) for turn in request.history],
            "settings": dict(request.settings),
        }
        return self._render(self._compiled, variables, self.setting)

    def _render(self, value: Any, variables: dict[str, Any], where: str) -> Any:
        if isinstance(value, str):
            return value
        import jinja2

        from ultra_kit.jinja_sandbox import RenderLimitError, render_limited

        if isinstance(value, _Variable):
            return value.value(variables, where)
        if isinstance(value, jinja2.Template):
            try:
                return render_limited(value, variables)
            except jinja2.exceptions.UndefinedError as exc:
                raise InputError(f"{where} uses an undefined variable: {exc.message}") from None
            except RenderLimitError as exc:
                raise InputError(f"{where} stopped: {exc}") from None
            except jinja2.exceptions.SecurityError as exc:
                raise InputError(f"{where} does something the sandbox forbids: {exc}") from None
            except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
                raise InputError(f"{where} failed: {type(exc).__name__}: {exc}") from None
        if isinstance(value, dict):
            return {key: self._render(item, variables, f"{where}.{key}") for key, item in value.items()}
        if isinstance(value, list):
            return [self._render(item, variables, f"{where}[{i}]") for i, item in enumerate(value)]
        return value
