"""A prompt's reply declared once (``Reply``): its JSON schema and the values its labels map to.

From the declaration come the three things that used to be spelled out by hand beside each other:

- ``response_format(name, length)``: what structured output sends (``schema.response_format``);
- ``repair(length)``: what the repair message asks for after an unreadable reply
  (``Reply with one JSON object: {"support": "full", "partial" or "none"}.``);
- ``read(text, length)``: the default reader. It finds the JSON in the reply (``json_text.last_json``) and
  checks each property against the schema: a label is compared in lower case with spaces and hyphens
  read as ``_``; a text is stripped (missing: ""); a list of texts keeps its non-blank items, stripped.
  It returns ``{property: label or text}``; ``values`` maps labels to numbers (``reply.value("idk", "partial")``).

A ``listed`` reply is a list: its schema is an object with one list property (what strict structured
output wants), and the reader takes the list, in the object or bare, sized to ``length`` when given.
A reply that is not JSON (a ``##final score: N`` line), or that needs more than these checks, brings
its own reader (``read_with``) and repair text (``repair_with``); its schema, if any, is still sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ultra_llm.replies.json_text import Spans, Unreadable, last_json
from ultra_llm.replies.schema import Schema, array, choice, obj, response_format


class Labels(dict):
    """Labels and the values they map to, as a property of ``Reply.of`` (the schema gets their names)."""


def labels(mapping: Mapping[str, Any] | None = None, /, **values: Any) -> Labels:
    """``labels(full=1.0, partial=0.5, none=0.0)``: a property that takes one of these labels."""
    return Labels({**(mapping or {}), **values})


@dataclass(frozen=True)
class Reply:
    """What a prompt's reply must be; see the module docstring."""

    schema: Schema | None = None
    values: Mapping[str, Mapping[Any, Any]] = field(default_factory=dict)  # property -> {label: value}
    listed: bool = False
    read_with: Callable[[str], Any] | None = None
    repair_with: str | None = None
    spans: Spans = "counted"
    structured: bool = True  # False: the schema shapes the reader and the repair text, and is never sent
    example_with: str | None = None  # the example reply of a reply read by read_with without a schema

    @classmethod
    def of(
        cls, *, listed: bool = False, spans: Spans = "counted", structured: bool = True, **properties: Schema | Labels
    ) -> Reply:
        """A JSON object reply with these properties (schema builders, or ``labels(...)``), all required."""
        values = {name: dict(p) for name, p in properties.items() if isinstance(p, Labels)}

        def part(p: Schema | Labels) -> Schema:  # labels of a listed reply label each item of its list
            if not isinstance(p, Labels):
                return p
            return array(choice(*p)) if listed else choice(*p)

        schema = obj(**{name: part(p) for name, p in properties.items()})
        if listed and not (len(schema["properties"]) == 1 and "enum" in _only(schema).get("items", {})):
            raise ValueError("a listed reply's schema has exactly one property, a list of choices")
        unread = [name for name, part in schema["properties"].items() if not listed and not _readable(part)]
        if unread:
            raise ValueError(f"the default reader takes labels, texts and lists of texts, not {unread}: use read_with")
        return cls(schema, values, listed=listed, spans=spans, structured=structured)

    def value(self, name: str, label: Any) -> Any:
        """The value that ``label`` of property ``name`` maps to."""
        return self.values[name][label]

    def response_format(self, name: str, *, length: int | None = None) -> dict[str, Any] | None:
        """The ``response_format`` asking for this reply under the name ``name`` (None without a schema)."""
        if self.schema is None or not self.structured:
            return None
        return response_format(name, self.schema, length=length)

    def repair(self, *, length: int | None = None) -> str:
        """What the repair message asks for."""
        if self.repair_with is not None:
            return self.repair_with
        if self.schema is None:
            raise ValueError("a reply without a schema needs repair_with")
        if self.listed:
            (name,) = self.schema["properties"]
            items = self.schema["properties"][name]["items"]
            size = f"exactly {length} " if length is not None else ""
            kind = "numbers" if items.get("type") == "integer" else "strings"
            canonical = list(dict.fromkeys(self.values.get(name, {}).values())) or items["enum"]  # aliases left out
            return f"Reply with a JSON array of {size}{kind}, each {_choices(canonical)}."
        return f"Reply with one JSON object: {_example(self.schema)}."

    def read(self, text: str, *, length: int | None = None) -> Any:
        """The reply's value, or ``Unreadable`` with the reason."""
        if self.read_with is not None:
            return self.read_with(text)
        if self.schema is None:
            raise ValueError("a reply without a schema needs read_with")
        if self.listed:
            (name,) = self.schema["properties"]
            return self._list(last_json(text, list, spans=self.spans), name, length)
        data = last_json(text, dict, spans=self.spans)
        return {name: self._property(data, name, part) for name, part in self.schema["properties"].items()}

    def example(self, *, length: int | None = None) -> str:
        """A reply text that the schema allows (the first label of each choice; what a test stub answers, and the
        placeholder of ``ultra run --estimate``); ``example_with`` when given."""
        if self.example_with is not None:
            return self.example_with
        if self.schema is None:
            raise ValueError("a reply without a schema has no example")
        value = _sample(self.schema, length)
        return json.dumps(next(iter(value.values())) if self.listed else value)

    def _property(self, data: dict[str, Any], name: str, part: Schema) -> Any:
        value = data.get(name, "")
        if "enum" in part:
            return _label(value, part["enum"], f"{name} {value!r}")
        if part.get("type") == "string":
            return str(value or "").strip()
        if part.get("type") == "array" and part["items"].get("type") == "string" and "enum" not in part["items"]:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise Unreadable(f'expected "{name}" to be a list of strings')
            texts = [v.strip() for v in value if v.strip()]
            if "minItems" in part and len(texts) != part["minItems"] == part.get("maxItems"):
                raise Unreadable(f"expected {part['minItems']} {name}, got {len(texts)}")
            return texts
        raise ValueError(f"the default reader cannot read {name!r}: use read_with")  # Reply.of refuses such a schema

    def _list(self, values: list[Any], name: str, length: int | None) -> list[Any]:
        if length is not None and len(values) != length:
            raise Unreadable(f"expected a list of {length} {name}, got {len(values)}")
        enum = _only(self.schema or {})["items"]["enum"]
        if all(isinstance(v, int) for v in enum):
            if any(v not in enum or isinstance(v, bool) for v in values):
                raise Unreadable(f"every one of the {name} must be {_choices(enum)}")
            return [int(v) for v in values]
        aliases = self.values.get(name, {label: label for label in enum})
        return [aliases[_label(v, list(aliases), f"label {v!r}", shown=sorted(set(aliases.values())))] for v in values]


def _readable(part: Schema) -> bool:
    """Whether the default reader reads a property of this schema: a choice, a text, or a list of texts."""
    items = part.get("items", {})
    return (
        "enum" in part
        or part.get("type") == "string"
        or (part.get("type") == "array" and _readable(items) and "enum" not in items)
    )


def _only(schema: Schema) -> Schema:
    return next(iter(schema["properties"].values()))


def _label(value: Any, allowed: list[Any], what: str, *, shown: list[Any] | None = None) -> Any:
    """``value`` as one of ``allowed``: numbers as they are, text in lower case with spaces and hyphens as ``_``."""
    if all(isinstance(a, int) for a in allowed):
        if value in allowed and not isinstance(value, bool):  # JSON's true is no 1, as in a list (``_list``)
            return int(value)
    else:
        key = str(value).strip().lower().replace(" ", "_").replace("-", "_")
        if key in allowed:
            return key
    raise Unreadable(f"{what} is not one of {shown or list(allowed)}")


def _choices(values: list[Any]) -> str:
    shown = [json.dumps(v) for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _example(schema: Schema) -> str:
    """How the repair message writes a value of ``schema``."""
    if "enum" in schema:
        return _choices(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        return "{" + ", ".join(f'"{name}": {_example(part)}' for name, part in schema["properties"].items()) + "}"
    if kind == "array":
        items = schema["items"]
        if schema.get("minItems") is not None and schema.get("minItems") == schema.get("maxItems"):
            return f"[{schema['minItems']} {'strings' if items.get('type') == 'string' else 'items'}]"
        return f"[{_example(items)}]" if items.get("type") == "object" else "[...]"
    return '"..."' if kind == "string" else "..."


def _sample(schema: Schema, length: int | None) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {name: _sample(part, length) for name, part in schema["properties"].items()}
    if kind == "array":
        return [_sample(schema["items"], length)] * (length or schema.get("minItems") or 1)
    return "text"
