"""A record's field by its path (``a.b``, ``turns.-1.text``), shared by key_map, filters and sampling."""

from __future__ import annotations

from typing import Any

MISSING = object()  # the field is absent (unlike a field holding null)


def field_value(record: dict[str, Any], source: str) -> Any:
    """The value of ``source`` in ``record``; ``a.b`` reaches into nested objects, and a key that holds dots itself
    is found whole (``metadata.service.version``: a trace's ``service.version``). MISSING if absent."""
    if source in record:
        return record[source]
    value: Any = record
    parts = source.split(".")
    for index, part in enumerate(parts):
        if index and isinstance(value, dict) and len(parts) - index > 1:
            rest = ".".join(parts[index:])
            if rest in value:
                return value[rest]
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value
