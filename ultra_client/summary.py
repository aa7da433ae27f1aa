"""The table ``ultra run`` prints at the end: every scalar result of every variable the run produced.

- A variable holding a number prints as one row; a mapping prints a row per numeric entry (one
  level of nesting is followed, as ``key.sub``), whatever the variable is named (a renamed
  ``eval_res`` such as ``answer_scores`` too). ``get_data``'s ``data_info`` gives the record counts.
- A mapping of mappings (``evaluate_trec_pvalue``'s rows, one per measure) prints as a table of its
  own: a row per key, a column per scalar entry.
- Lists (per-item values) are left out: they are in ``memory.json``.
- Numbers print with 4 decimals (integers as they are), columns aligned. Long tables are cut,
  saying how many rows are left out.
- The table ends with the path of ``report.html`` when a tool returned one.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

MAX_ROWS = 40  # per variable; the rest is in memory.json
REPORT_NAME = "report.html"


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def cell(value: Any) -> str:
    """A value as the table shows it: floats with 4 decimals, integers whole, booleans yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4f}" if math.isfinite(value) else str(value)
    return "-" if value is None else str(value)


def scalar_rows(value: Any) -> list[tuple[str, Any]]:
    """(key, number) for the numbers of a mapping, one nested mapping deep (``key.sub``)."""
    rows: list[tuple[str, Any]] = []
    for key, item in value.items():
        if is_number(item):
            rows.append((str(key), item))
        elif isinstance(item, dict):
            rows.extend((f"{key}.{sub}", inner) for sub, inner in item.items() if is_number(inner))
    return rows


def row_table(value: Any) -> tuple[list[str], list[tuple[str, list[Any]]]] | None:
    """Columns and rows of a mapping whose values are mappings holding numbers (e.g. p-value rows), else None."""
    if not isinstance(value, dict) or not value or not all(isinstance(item, dict) for item in value.values()):
        return None
    if not any(is_number(inner) for item in value.values() for inner in item.values()):
        return None
    columns: list[str] = []
    for item in value.values():
        for key, inner in item.items():
            if (is_number(inner) or isinstance(inner, (str, bool))) and key not in columns:
                columns.append(key)
    # a column that only repeats the row's key (p-value rows name their metric twice) says nothing
    columns = [c for c in columns if any(item.get(c) != row for row, item in value.items())]
    return columns, [(str(key), [item.get(column) for column in columns]) for key, item in value.items()]


def align(rows: list[list[str]], numeric: list[bool]) -> list[str]:
    """Rows of cells as lines: text columns left-aligned, number columns right-aligned, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [text.rjust(w) if right else text.ljust(w) for text, w, right in zip(row, widths, numeric, strict=True)]
        lines.append("  ".join(cells).rstrip())
    return lines


def summary_lines(memory: dict[str, Any], report: str | None = None) -> list[str]:
    """The table's lines for the run's final variables (empty if there is no scalar result)."""
    flat: list[list[str]] = []
    cut: list[str] = []
    tables: list[str] = []
    for name, value in memory.items():
        if is_number(value):
            flat.append([name, "", cell(value)])
            continue
        table = row_table(value)
        if table is not None:
            tables.extend(["", *_row_table_lines(name, *table)])
            continue
        if isinstance(value, dict):
            rows = scalar_rows(value)
            for index, (key, number) in enumerate(rows[:MAX_ROWS]):
                flat.append([name if index == 0 else "", key, cell(number)])
            if len(rows) > MAX_ROWS:
                cut.append(f"{name}: {len(rows) - MAX_ROWS} more rows in memory.json")
    lines = align([["variable", "result", "value"], *flat], [False, False, True]) if flat else []
    if lines:
        lines.insert(1, "-" * len(lines[0]))
    lines = [*lines, *(f"({text})" for text in cut), *tables]
    if report:
        lines.extend(["", f"report: {report}"])
    return lines[1:] if lines and lines[0] == "" else lines


def _row_table_lines(name: str, columns: list[str], rows: list[tuple[str, list[Any]]]) -> list[str]:
    shown = rows[:MAX_ROWS]
    numeric = [
        False,
        *(all(is_number(v) or v is None for _, values in shown for v in [values[i]]) for i in range(len(columns))),
    ]
    cells = [[name, *columns], *([key, *(cell(v) for v in values)] for key, values in shown)]
    lines = align(cells, numeric)
    lines.insert(1, "-" * len(lines[0]))
    if len(rows) > MAX_ROWS:
        lines.append(f"({len(rows) - MAX_ROWS} more rows in memory.json)")
    return lines


def report_path(memory: dict[str, Any]) -> str | None:
    """The last string in the results naming a ``report.html`` file, if any."""
    found = None
    for text in strings_inside(memory):
        if text.endswith(REPORT_NAME) and "\n" not in text:
            found = text
    return found


def strings_inside(value: Any, depth: int = 0) -> Iterator[str]:
    """Strings inside a result: mappings three levels deep, the first 50 items of lists two levels deep."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict) and depth < 3:
        for item in value.values():
            yield from strings_inside(item, depth + 1)
    elif isinstance(value, list) and depth < 2:
        for item in value[:50]:
            yield from strings_inside(item, depth + 1)
