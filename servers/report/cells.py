"""How a value reads in a table cell (every table of the report and of the comparison)."""

from __future__ import annotations

import math
from typing import Any


def number(value: Any, digits: int = 4) -> str:
    """A value as the tables show it: 4 decimals, integers as such, no value as an empty cell."""
    if value is None or isinstance(value, str):
        return "" if value is None else value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return f"{value:.{digits}f}"
