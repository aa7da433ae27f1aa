"""A tool setting typed as a whole number, a number or true/false (or one of those or None) and written as one
``${VAR}`` (``top_k: ${TOP_K}``): read as that type from the variable's text.

``${VAR}`` expands to text, and a tool's ``top_k: int`` would refuse the text ``"5"`` (or, given as a default in a
server's ``parameter.yaml``, receive it). Here a setting whose whole value is exactly one ``${VAR}`` and whose
parameter is typed ``int``, ``float`` or ``bool`` (``Optional`` too) becomes that type when its variable's text is one
(``5``, `` 16 ``, ``-1``; ``0.7``, ``1e-5``; ``true``/``false`` in any case). Any other text (``5.5`` for a whole
number, ``yes``, ``nan``) is refused naming the setting and the reference, never the value: ``top_k ${TOP_K} must
hold a whole number; it holds something else (not shown)``. A setting typed ``str`` (or anything else) keeps the
text as written.

One reading for every way in: the tool wrapper (``ultra_kit.factory.with_settings``: a ``parameter.yaml`` default),
the arguments of a call before they are validated (``ultra call`` in process, any MCP caller, ``ultra_kit.serving``),
and the client, which reads the kinds from the tools' input schemas (``kind_of_schema``): ``ultra build`` and the
checks before ``ultra run``'s first step (naming the parameter file's line), and what ``ultra run`` sends.
"""

from __future__ import annotations

import math
import os
import types
import typing
from collections.abc import Mapping
from typing import Any

from ultra_base import redact
from ultra_base.errors import InputError
from ultra_base.variable_counts import reference, what_it_holds, whole_number

KINDS: dict[type, str] = {bool: "true or false", int: "a whole number", float: "a number"}
_SCHEMA_KINDS: dict[str, type] = {"boolean": bool, "integer": int, "number": float}
_BOOLEANS = {"true": True, "false": False}


def kind_of(annotation: Any) -> type | None:
    """``int``, ``float`` or ``bool`` when ``annotation`` is that type, ``Optional`` of it or ``Annotated`` with it;
    None for any other (``str``, a list, a union of two types)."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        others = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        annotation = others[0] if len(others) == 1 else None
        if typing.get_origin(annotation) is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
    return annotation if annotation in KINDS else None


def kind_of_schema(schema: Any) -> type | None:
    """The kind of a parameter from its JSON schema (a tool listing's ``inputSchema`` property): ``integer``,
    ``number`` or ``boolean``, alone or with ``null`` (``anyOf``); None for any other."""
    if not isinstance(schema, dict):
        return None
    options = schema.get("anyOf") if isinstance(schema.get("anyOf"), list) else [schema]
    kinds = [option.get("type") for option in options if isinstance(option, dict) and option.get("type") != "null"]
    return _SCHEMA_KINDS.get(kinds[0]) if len(kinds) == 1 and isinstance(kinds[0], str) else None


def schema_kinds(input_schema: Any) -> dict[str, type]:
    """``{parameter: kind}`` of the typed parameters of a tool's input schema."""
    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    found = {name: kind_of_schema(schema) for name, schema in (properties or {}).items()}
    return {name: kind for name, kind in found.items() if kind is not None}


def read_typed(
    value: Any, kind: type | None, *, setting: str, environ: Mapping[str, str] | None = None, unset_ok: bool = False
) -> Any:
    """``value`` read as ``kind`` when it is exactly one ``${VAR}`` and ``kind`` is one of ``KINDS``; else as is.

    InputError when the variable's text is not of the kind (naming ``setting`` and the reference, never the value),
    or is not set (``unset_ok``: left as written, for whoever names it later). A text read is remembered as every
    expanded value is (``ultra_base.redact``: a short number, true and false are no secret, a long number is); a
    refused text is not (it is never shown, and a ``null`` would turn every null of every later result into ``***``).
    """
    name = reference(value) if kind in KINDS else None
    if name is None:
        return value
    env = os.environ if environ is None else environ
    if name not in env:
        if unset_ok:
            return value
        raise InputError(f"environment variable {name} is not set; export {name}=... before running")
    text = env[name]
    read = parsed(text, kind)
    if read is None:
        raise InputError(f"{setting} ${{{name}}} must hold {KINDS[kind]}; {what_it_holds(name, env)}")
    redact.remember(text)  # as expand_env does
    return read


def parsed(text: str, kind: type) -> Any:
    """``text`` as ``kind`` (``bool``, ``int`` or ``float``: finite), or None when it is not one."""
    if kind is bool:
        return _BOOLEANS.get(text.strip().lower())
    if kind is int:
        return whole_number(text)
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def read_arguments(arguments: Mapping[str, Any], kinds: Mapping[str, type]) -> dict[str, Any]:
    """A call's ``arguments`` with each typed one written as one ``${VAR}`` read as its kind (InputError otherwise)."""
    return {name: read_typed(value, kinds.get(name), setting=name) for name, value in arguments.items()}
