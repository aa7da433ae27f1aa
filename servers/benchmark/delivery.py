"""How get_data hands its result back: inline, or, above ``max_result_bytes``, as a file and its path.

A large result is slow to read over MCP: a 50 MB one took 290 s through the Python SDK's ``ClientSession`` on
a loaded machine, because the SDK's stdio reader joins each 64 KB chunk onto the whole line read so far. A
caller that sets ``benchmark.max_result_bytes`` gets, for a result whose JSON is larger, only ``data_info`` and
``data_path``: the file holds the full result (the same lists and ``data_info``), written atomically under
``save_path``.
"""

from __future__ import annotations

from typing import Any

from ultra_kit.files import atomic_write_text, compact_json, result_path
from ultra_kit.limits.caps import count

INLINE = -1  # max_result_bytes: always return the lists


def delivered(result: dict[str, Any], *, max_result_bytes: int, save_path: str) -> dict[str, Any]:
    """``result`` as is, or ``{data_path, data_info}`` with ``result`` written to a file when its compact JSON
    is larger than ``max_result_bytes`` (-1: never)."""
    limit = count(max_result_bytes, "benchmark.max_result_bytes (-1 = always the lists)", minimum=INLINE)
    if limit == INLINE:
        return result
    text = compact_json(result)
    if len(text.encode()) <= limit:
        return result
    path = atomic_write_text(result_path(save_path, "get_data"), text)
    return {"data_path": str(path), "data_info": result["data_info"]}
