"""JSON schemas of structured replies, and the ``response_format`` that asks an endpoint for one.

Servers declare what a reply must look like with these builders (the judge registry, synth's prompts).
The schemas keep to what OpenAI's strict structured outputs accept: an object at the root, every
property required, no other property, ``enum`` / ``minItems`` / ``maxItems``. The local backend
decodes under the same schema (``ultra_llm.local.schema``).
"""

from __future__ import annotations

import copy
from typing import Any

Schema = dict[str, Any]


def obj(**properties: Schema) -> Schema:
    """An object with exactly these properties, all required."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def text() -> Schema:
    return {"type": "string"}


def choice(*values: str | int) -> Schema:
    """One of ``values`` (strings, or whole numbers)."""
    kind = "integer" if all(isinstance(v, int) for v in values) else "string"
    return {"type": kind, "enum": list(values)}


def array(items: Schema, *, at_most: int | None = None) -> Schema:
    return {"type": "array", "items": items, **({"maxItems": at_most} if at_most is not None else {})}


def sized(schema: Schema, length: int) -> Schema:
    """``schema`` (an object) with exactly ``length`` items in each of its top-level lists (a copy)."""
    schema = copy.deepcopy(schema)
    for value in schema.get("properties", {}).values():
        if value.get("type") == "array":
            value["minItems"] = value["maxItems"] = length
    return schema


def response_format(name: str, schema: Schema, *, length: int | None = None) -> dict[str, Any]:
    """The OpenAI ``response_format`` asking for a reply under ``schema`` (``length``: see ``sized``)."""
    body = sized(schema, length) if length is not None else schema
    return {"type": "json_schema", "json_schema": {"name": name, "schema": body, "strict": True}}
