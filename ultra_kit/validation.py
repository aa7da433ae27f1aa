"""Argument validation errors as sentences: "`ir_metrics` must be a list of strings, got a string".

pydantic's own text (``1 validation error for evaluate_trecArguments ... [type=..., input_value=...]``
and a documentation URL) is written for Python programmers. A caller of a tool (a person at
``ultra call``, an agent over MCP) needs the parameter, what it must be and what it got. The
expected type is read from the tool's JSON input schema, the one both paths publish: the
in-process argument model's ``model_json_schema()`` and the MCP tool listing's ``inputSchema``.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

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
    for part in loc[1:]:  # follow list items and mapping keys into the union member the value is
        node = _resolve(node, defs)
        options = node.get("anyOf") or node.get("oneOf")
        if options:
            node = _member(options, value, defs)
            if isinstance(part, str) and not (isinstance(value, dict) and part in value):
                continue  # pydantic's tag of the member it tried (``dict[str,float]``), not a key
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


def _member(options: list[dict[str, Any]], value: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """The member of a union whose JSON type the value has (a mapping: the object member), else the union."""
    wanted = "object" if isinstance(value, dict) else "array" if isinstance(value, list | tuple) else None
    members = [_resolve(option, defs) for option in options]
    matching = [member for member in members if member.get("type") == wanted] if wanted else []
    return matching[0] if len(matching) == 1 else {"anyOf": options}


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
        return f"a number ({value!r})"  # not :g, which shows 100000.5 as 100000
    if isinstance(value, str):
        return "a string" if len(value) > 40 else f"a string ({value!r})"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
