"""JSON by orjson where it agrees with the standard library, which takes over where it would not.

orjson encodes and decodes several times faster than ``json``: a 20 KB reply of ten passages is parsed in a
third of the time and a record of it written in a tenth, which is most of ``target.ask``'s own CPU per
request. It differs from ``json`` at the edges, and there ``json`` is used, as before:

* decoding: NaN and Infinity, lone surrogates and nesting past 1,024 levels are errors to orjson; integers
  beyond 64 bits become floats. A document orjson refuses, or in which it found a float of 2**63 or more, is
  parsed again by ``json`` (``loads``), so what the reader sees is what ``json.loads`` gives.
* encoding: integers beyond 64 bits and keys that are not text are errors to orjson (``json`` writes them);
  NaN and infinity become ``null`` (``json`` writes ``NaN``, which is not JSON). The text is compact (no
  spaces after ``,`` and ``:``), non-ASCII characters as UTF-8, as ``ensure_ascii=False`` writes them.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_BIG = float(2**63)  # orjson reads a larger integer as a float: json would give the int


def dumps(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON."""
    try:
        return orjson.dumps(value)
    except TypeError:  # an integer past 64 bits, a key that is not text, a type orjson does not know
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def loads(data: bytes | str, max_depth: int) -> tuple[Any, int]:
    """(the document, its depth) by orjson, or (None, -1) where ``json`` must read it (see the module's text).

    The depth (the deepest nesting of arrays and objects; 0 for a scalar) is found walking the document with
    an early stop past ``max_depth`` (then ``max_depth + 1``), which costs per value, not per byte."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None, -1
    if type(document) is float:
        return (None, -1) if not -_BIG < document < _BIG else (document, 0)
    if not isinstance(document, (dict, list)):
        return document, 0
    deepest = 1
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        for child in value.values() if type(value) is dict else value:
            if type(child) is float:
                if not -_BIG < child < _BIG:
                    return None, -1
            elif isinstance(child, (dict, list)):
                if depth + 1 > max_depth:
                    return document, depth + 1
                deepest = max(deepest, depth + 1)
                stack.append((child, depth + 1))
    return document, deepest
