"""Tables of the run's end fitted to a terminal: a mapping of mappings or a list of rows, cut to a few rows and
to the columns that fit, turned (a row per column) when that fits better, with a note of the shape and of
where the whole value is. ``full`` keeps everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

WIDTH = 100  # characters a line may take by default
TABLE_ROWS = 20  # rows a table shows by default
CELL = 32  # characters a cell shows by default (the middle is cut: "long…name")
GAP = "  "


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def shown_cell(value: Any) -> str:
    """A value as a table shows it: floats with 4 decimals, integers whole, booleans yes/no, None as -."""
    import math

    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4f}" if math.isfinite(value) else str(value)
    return "-" if value is None else " ".join(str(value).split())  # one line


@dataclass
class Grid:
    """A table: its name (top-left cell), column names and rows of (row name, values)."""

    name: str
    columns: list[str]
    rows: list[tuple[str, list[Any]]]

    def turned(self) -> Grid:
        """The same table with rows and columns swapped."""
        keys = [key for key, _ in self.rows]
        return Grid(
            self.name, keys, [(column, [values[i] for _, values in self.rows]) for i, column in enumerate(self.columns)]
        )


def list_grid(name: str, items: list[Any]) -> Grid | None:
    """A list of rows (mappings holding scalars) as a Grid, rows numbered from 1; None for other lists."""
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    columns: list[str] = []
    for item in items:
        for key, value in item.items():
            if (value is None or isinstance(value, (int, float, str, bool))) and key not in columns:
                columns.append(str(key))
    if not columns:
        return None
    return Grid(name, columns, [(str(i), [item.get(c) for c in columns]) for i, item in enumerate(items, start=1)])


def cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, its middle replaced by an ellipsis."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    return text[:head] + "…" + text[len(text) - (limit - 1 - head) :]


def fitted(grid: Grid, *, width: int = WIDTH, max_rows: int = TABLE_ROWS, full: bool = False) -> tuple[list[str], str]:
    """The table's lines and a note of its shape when not all of it fits as it is ('' otherwise): at most
    ``max_rows`` rows and the columns that fit in ``width``, turned when that shows more. ``full``: everything."""
    if full:
        return _lines(grid, CELL * 100), ""
    grid, same = _without_constants(grid)
    best, turned = _fit(grid, width, max_rows), False
    if _cells(best) < _cells(grid):
        other = _fit(grid.turned(), width, max_rows)
        if _cells(other) > _cells(best):
            best, turned = other, True
    rows, columns = (len(grid.columns), len(grid.rows)) if turned else (len(grid.rows), len(grid.columns))
    left = [f"first {len(best.rows)} rows"] if len(best.rows) < rows else []
    left += [f"first {len(best.columns)} columns"] if len(best.columns) < columns else []
    note = f"{len(grid.rows)} rows x {len(grid.columns) + len(same)} columns"
    note += (", turned: a row per column" if turned else "") + "".join(f"; {c} = {v} in every row" for c, v in same)
    return _lines(best, CELL), (f"{note}; {' and '.join(left)} shown" if left else note if turned or same else "")


def _without_constants(grid: Grid) -> tuple[Grid, list[tuple[str, str]]]:
    """The grid without its text columns that hold one value in every row (said once in the note instead)."""
    if len(grid.rows) < 2:
        return grid, []
    same = [
        i
        for i in range(len(grid.columns))
        if isinstance(grid.rows[0][1][i], str) and all(values[i] == grid.rows[0][1][i] for _, values in grid.rows)
    ]
    kept = [i for i in range(len(grid.columns)) if i not in same]
    rows = [(key, [values[i] for i in kept]) for key, values in grid.rows]
    named = [(grid.columns[i], shown_cell(grid.rows[0][1][i])) for i in same]
    return Grid(grid.name, [grid.columns[i] for i in kept], rows), named


def _fit(grid: Grid, width: int, max_rows: int) -> Grid:
    rows = grid.rows[:max_rows]
    used = max(len(cut(key, CELL)) for key in [grid.name, *(key for key, _ in rows)])
    columns = 0
    for i, column in enumerate(grid.columns):
        cells = [column, *(shown_cell(values[i]) for _, values in rows)]
        used += len(GAP) + max(len(cut(text, CELL)) for text in cells)
        if used > width:
            break
        columns += 1
    return Grid(grid.name, grid.columns[:columns], [(key, values[:columns]) for key, values in rows])


def _cells(grid: Grid) -> int:
    return len(grid.rows) * len(grid.columns)


def _lines(grid: Grid, limit: int) -> list[str]:
    """The grid's lines: text columns left-aligned, number columns right-aligned, a rule under the header."""
    numeric = [False] + [
        all(is_number(values[i]) or values[i] is None for _, values in grid.rows) for i in range(len(grid.columns))
    ]
    cells = [[grid.name, *grid.columns], *([key, *(shown_cell(v) for v in values)] for key, values in grid.rows)]
    cells = [[cut(text, limit) for text in row] for row in cells]
    lines = align(cells, numeric)
    lines.insert(1, "-" * len(lines[0]))
    return lines


def align(rows: list[list[str]], numeric: list[bool]) -> list[str]:
    """Rows of cells as lines: text columns left-aligned, number columns right-aligned, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [text.rjust(w) if right else text.ljust(w) for text, w, right in zip(row, widths, numeric, strict=True)]
        lines.append(GAP.join(cells).rstrip())
    return lines
