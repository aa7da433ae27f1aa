"""Reading a JSON object or list out of an LLM reply, or saying that there is none (``Unreadable``).

Where the value is looked for, in this order: each fenced block (```json ... ```), first to last; the
whole reply; then the JSON starting at each opening bracket of the wanted kind, the last bracket
first. The first of these that is a JSON value of that kind is the reading. How the JSON starting at a
bracket ends is the one thing the servers' readers differ in, so it is a parameter (``spans``):

- ``"counted"`` (the judge): the text up to where the brackets balance, counting every bracket, also
  one inside a string; a value with an unbalanced bracket inside a string is passed over.
- ``"decoded"`` (synth): the JSON value decoded from the bracket on, strings respected.

Wherever ``"counted"`` reads a value, ``"decoded"`` reads the same value from that bracket; they part
only when a later value holds a bracket inside a string (``"decoded"`` reads that later value, or a
value ``"counted"`` finds none in). A JSON text Python cannot take (a number of more than 4,300
digits, nesting deeper than the recursion limit) counts as no value; it raises nothing else.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

Spans = Literal["counted", "decoded"]
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_CLOSER = {"[": "]", "{": "}"}
_DECODER = json.JSONDecoder()
_NOT_JSON = (ValueError, RecursionError)  # ValueError covers json.JSONDecodeError and too-long numbers


class Unreadable(ValueError):
    """The reply holds no value of the expected shape; the message says why."""


def last_json(text: str, kind: type, *, spans: Spans) -> Any:
    """The JSON ``kind`` (dict or list) in ``text``, looked for as the module docstring says; else ``Unreadable``."""
    for candidate in [block.strip() for block in _FENCE.findall(text)] + [text.strip()]:
        value = _loaded(candidate)
        if isinstance(value, kind):
            return value
    opener = "[" if kind is list else "{"
    read_from = _decoded_from if spans == "decoded" else _counted_from
    for start in reversed([i for i, ch in enumerate(text) if ch == opener]):
        value = read_from(text, start)
        if isinstance(value, kind):
            return value
    raise Unreadable(f"no JSON {kind.__name__} in the reply")


def _loaded(candidate: str) -> Any:
    """The JSON value that ``candidate`` is, or None."""
    try:
        return json.loads(candidate)
    except _NOT_JSON:
        return None


def _counted_from(text: str, start: int) -> Any:
    """The JSON value of the text from ``start`` to where its brackets first balance, or None."""
    opener, closer = text[start], _CLOSER[text[start]]
    depth = 0
    for end in range(start, len(text)):
        if text[end] == opener:
            depth += 1
        elif text[end] == closer:
            depth -= 1
            if depth == 0:
                return _loaded(text[start : end + 1])
    return None


def _decoded_from(text: str, start: int) -> Any:
    """The JSON value decoded from ``start`` on (the text after it is left alone), or None."""
    try:
        return _DECODER.raw_decode(text, start)[0]
    except _NOT_JSON:
        return None
