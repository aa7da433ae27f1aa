"""The values inside nested lists and mappings (JSON-like data), walked without recursion."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def leaves(value: Any) -> Iterator[Any]:
    """Each value in ``value`` that is neither a mapping nor a list or tuple, at any depth (``value`` itself if it is
    none of those); a mapping's values, not its keys."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            yield item
