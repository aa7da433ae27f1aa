"""The names a tool accepts, so an unknown argument is refused instead of dropped without a word."""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ultra_base.errors import unknown_names_message
from ultra_base.nested import leaves


@dataclass(frozen=True)
class ArgumentCheck:
    """The names a tool accepts: its parameters, and the keys of a parameter annotated with a TypedDict.

    The MCP SDK validates arguments with a pydantic model that ignores unknown names, so an agent's
    ``k=10`` (for ``ks``) or ``benchmark={pth: ...}`` would be dropped without a word and default
    results come back. ``problem`` names each unknown one, the closest known name and the known
    ones; the MCP server (``ultra_kit.serving``) and in-process calls (``ultra_kit.inprocess``)
    reject the call with it before validating.
    """

    tool: str
    parameters: tuple[str, ...]
    mapping_keys: dict[str, tuple[str, ...]]

    @classmethod
    def of(
        cls, tool: str, parameters: Sequence[inspect.Parameter], hints: dict[str, Any], context_type: type
    ) -> ArgumentCheck:
        names: list[str] = []
        keys: dict[str, tuple[str, ...]] = {}
        for param in parameters:
            annotation = hints.get(param.name, param.annotation)
            if _mentions(annotation, context_type):
                continue
            names.append(param.name)
            record = _typed_dict(annotation)
            if record is not None:
                keys[param.name] = tuple(record.__annotations__)
        return cls(tool, tuple(names), keys)

    def problem(self, arguments: dict[str, Any]) -> str | None:
        """The message for unknown names in ``arguments`` (as a caller sent them), or for a whole number past what a
        result file holds; None when there is neither."""
        unknown = [name for name in arguments if name not in self.parameters]
        if unknown:
            return unknown_names_message(unknown, self.parameters, owner=self.tool)
        for name, value in arguments.items():
            wide = _too_wide(value)
            if wide is not None:
                digits = len(str(abs(wide)))
                return (
                    f"argument {name!r}: a whole number of {digits} digits ({str(wide)[:12]}...) is past the range a "
                    f"result file holds ({WIDEST[0]:,} to {WIDEST[1]:,}); give a smaller one"
                )
        for name, keys in self.mapping_keys.items():
            value = arguments.get(name)
            if isinstance(value, str):  # JSON text for a mapping (the SDK parses it too)
                try:
                    value = json.loads(value)
                except (ValueError, RecursionError):
                    continue
            if isinstance(value, dict) and (bad := [key for key in value if key not in keys]):
                return unknown_names_message(bad, keys, owner=name, what="key")
        return None


WIDEST = (-(2**63), 2**64 - 1)  # the whole numbers a result file holds (orjson writes 64-bit integers only)


def _too_wide(value: Any) -> int | None:
    """The first whole number in ``value`` (nested lists and mappings too) outside ``WIDEST``, else None."""
    wide = (
        n for n in leaves(value) if isinstance(n, int) and not isinstance(n, bool) and not WIDEST[0] <= n <= WIDEST[1]
    )
    return next(wide, None)


def _mentions(annotation: Any, target: type) -> bool:
    """True if ``annotation`` is ``target`` or a union holding it (``Context | None``)."""
    return annotation is target or target in typing.get_args(annotation)


def _typed_dict(annotation: Any) -> type | None:
    """The TypedDict that ``annotation`` (possibly ``Annotated``) is, else None."""
    import typing_extensions

    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation if typing_extensions.is_typeddict(annotation) else None
