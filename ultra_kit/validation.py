"""Argument validation errors as sentences: "`ir_metrics` must be a list of strings, got a string".

pydantic's own text (``1 validation error for evaluate_trecArguments ... [type=..., input_value=...]``
and a documentation URL) is written for Python programmers. A caller of a tool (a person at
``ultra call``, an agent over MCP) needs the parameter, what it must be and what it got. The
expected type is read from the tool's JSON input schema, the one both paths publish: the
in-process argument model's ``model_json_schema()`` and the MCP tool listing's ``inputSchema``.
``ArgumentCheck`` names the arguments a tool does not know (the SDK would drop them unseen).
"""

from __future__ import annotations

import contextlib
import inspect
import json
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ultra_kit.errors import unknown_names_message

# pydantic error types that mean "wrong kind of value" (the rest: constraints, missing, custom checks)
_TYPE_ERRORS = {"literal_error", "enum", "none_required", "int_from_float", "sequence_str", "is_instance_of"}

_SINGULAR = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
    "array": "a list",
    "object": "a mapping",
}
_PLURAL = {
    "string": "strings",
    "integer": "integers",
    "number": "numbers",
    "boolean": "true/false values",
    "null": "nulls",
    "array": "lists",
    "object": "mappings",
}


def describe_errors(errors: list[dict[str, Any]], schema: dict[str, Any], arguments: dict[str, Any]) -> str:
    """One sentence per parameter with errors, joined with "; " (pydantic's ``errors()`` as input)."""
    sentences: dict[str, str] = {}
    for error in errors:
        loc = tuple(error.get("loc") or ())
        if not loc:
            sentences.setdefault("", _lower_message(error.get("msg", "invalid arguments")))
            continue
        name = str(loc[0])
        if name in sentences:
            continue  # one sentence per parameter (a union gives one error per alternative)
        sentences[name] = _sentence(error, loc, schema, arguments)
    return "; ".join(sentences.values())


def _sentence(error: dict[str, Any], loc: tuple[Any, ...], schema: dict[str, Any], arguments: dict[str, Any]) -> str:
    kind = str(error.get("type", ""))
    if kind == "missing":
        return f"`{loc[0]}` is required"
    if kind == "extra_forbidden":
        return f"`{loc[0]}` is not a parameter of this tool"
    defs = schema.get("$defs") or {}
    node = (schema.get("properties") or {}).get(str(loc[0]), {})
    path = [loc[0]]
    value = arguments.get(str(loc[0]))
    if isinstance(value, str) and len(loc) > 1:  # JSON text for a list or mapping, parsed before validation
        with contextlib.suppress(ValueError, RecursionError):
            value = json.loads(value)
    for part in loc[1:]:  # follow list items and mapping keys; stop at a union's member tag
        node = _resolve(node, defs)
        if isinstance(part, int) and node.get("type") == "array" and isinstance(value, list | tuple):
            node, value = node.get("items") or {}, value[part] if part < len(value) else None
        elif isinstance(part, str) and node.get("type") == "object" and isinstance(value, dict) and part in value:
            properties = node.get("properties") or {}
            extra = node.get("additionalProperties")
            node = properties.get(part) or (extra if isinstance(extra, dict) else {})
            value = value[part]
        else:
            break
        path.append(part)
    where = (
        "`" + "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(path)) + "`"
    )
    if kind.endswith(("_type", "_parsing")) or kind in _TYPE_ERRORS:
        expected = describe_schema(node, defs)
        if expected:
            return f"{where} must be {expected}, got {describe_value(value)}"
    return f"{where} {_lower_message(str(error.get('msg', 'is invalid')))}, got {_short(error.get('input', value))}"


def _lower_message(message: str) -> str:
    """pydantic's "Input should be X" as "must be X"; "Value error, X" as X."""
    for prefix, replacement in (("Input should be ", "must be "), ("Value error, ", ""), ("Assertion failed, ", "")):
        if message.startswith(prefix):
            return replacement + message[len(prefix) :]
    return message[:1].lower() + message[1:]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _resolve(defs.get(ref.rsplit("/", 1)[-1], {}), defs)
    return node


def describe_schema(node: dict[str, Any], defs: dict[str, Any] | None = None, *, plural: bool = False) -> str:
    """``{"type": "array", "items": {"type": "string"}}`` -> "a list of strings" ("lists of strings" if plural)."""
    defs = defs or {}
    node = _resolve(node, defs)
    if "enum" in node:
        return "one of " + ", ".join(repr(v) for v in node["enum"])
    if "const" in node:
        return repr(node["const"])
    options = node.get("anyOf") or node.get("oneOf")
    if options:
        parts = [describe_schema(option, defs, plural=plural) for option in options]
        return " or ".join(dict.fromkeys(p for p in parts if p))
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(describe_schema({**node, "type": k}, defs, plural=plural) for k in kind)
    if kind == "array":
        items = node.get("items")
        inner = describe_schema(items, defs, plural=True) if isinstance(items, dict) else ""
        inner = f"({inner})" if " or " in inner else inner
        head = "lists" if plural else "a list"
        return f"{head} of {inner}" if inner else head
    if kind in _SINGULAR:
        return _PLURAL[kind] if plural else _SINGULAR[kind]
    return ""


def describe_value(value: Any) -> str:
    """What a caller gave, as a noun phrase: "a string", "a list", "null" ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value:g})"
    if isinstance(value, str):
        return "a string" if len(value) > 40 else f"a string ({value!r})"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


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
        """The message for unknown names in ``arguments`` (as a caller sent them), or None."""
        unknown = [name for name in arguments if name not in self.parameters]
        if unknown:
            return unknown_names_message(unknown, self.parameters, owner=self.tool)
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


def _mentions(annotation: Any, target: type) -> bool:
    """True if ``annotation`` is ``target`` or a union holding it (``Context | None``)."""
    return annotation is target or target in typing.get_args(annotation)


def _typed_dict(annotation: Any) -> type | None:
    """The TypedDict that ``annotation`` (possibly ``Annotated``) is, else None."""
    import typing_extensions

    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation if typing_extensions.is_typeddict(annotation) else None
