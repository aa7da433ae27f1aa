"""What ``ultra run`` prints at the end: every scalar result of every variable the run produced, fitted
to a 100-column terminal (``ultra run --full`` prints everything).

- A variable holding a number prints as one row; a mapping prints a row per numeric entry (one
  level of nesting is followed, as ``key.sub``), whatever the variable is named (a renamed
  ``eval_res`` such as ``answer_scores`` too). ``get_data``'s ``data_info`` gives the record counts.
- Rows are grouped under the step that produced them (``from judge.nuggetize:``), so two judges' ``counts``,
  ``failed`` and ``usage`` are not mistaken for each other (``producers``: variable -> step name).
- A mapping of mappings (``evaluate_trec_pvalue``'s rows, a query x document matrix) and a list of rows
  (``risk_table``, ``trec_rag_table``) print as tables of their own (``ultra_client.summary.tables``):
  a few rows and the columns that fit, turned when that shows more, then a note of the step, the shape
  and where the whole value is (the step's result file, else the run's ``memory.json``).
- Other lists (per-item values) print as one line: how many items, and the first ones.
- Numbers print with 4 decimals (integers as they are), columns aligned. Long tables are cut,
  saying how many rows are left out.
- The table ends with the path of ``report.html`` when a tool returned one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ultra_client.summary.tables import CELL, TABLE_ROWS, WIDTH, Grid, align, cut, fitted, is_number, list_grid
from ultra_client.summary.tables import shown_cell as cell

__all__ = ["MAX_ROWS", "cell", "is_number", "report_path", "summary_lines"]

MAX_ROWS = 40  # per variable; the rest is in memory.json
REPORT_NAME = "report.html"
LIST_ITEMS = 8  # items a list's line shows by default


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


def summary_lines(
    memory: dict[str, Any],
    report: str | None = None,
    *,
    producers: dict[str, str] | None = None,
    saved: dict[str, str] | None = None,
    full: bool = False,
    width: int = WIDTH,
) -> list[str]:
    """The lines for the run's final variables (empty if there is nothing to show); see the module.

    ``saved``: {a file's path as a variable names it: its path in the run folder} (``link_written_files``).
    """
    producers, saved = producers or {}, saved or {}
    steps = list(dict.fromkeys(["", *producers.values()]))  # in the order the steps ran; "" for no step known
    groups: list[tuple[str, list[list[str]]]] = []
    cut_notes: list[str] = []
    tables: list[str] = []
    lists: list[str] = []
    shown: dict[tuple, str] = {}  # a table's content -> the variable it was shown under
    for step in steps:
        flat: list[list[str]] = []
        for name, value in memory.items():
            if producers.get(name, "") != step:
                continue
            where = _where(name, memory, producers, saved)
            if is_number(value):
                flat.append([name, "", cell(value)])
            elif (grid := _grid(name, value)) is not None:
                same = shown.get(_content(grid))
                if same is not None:  # one result given twice (a mapping of rows and its list of rows)
                    lists.append(f"{name}: the same rows as {same} (from {step or 'the input'})")
                    continue
                shown[_content(grid)] = name
                tables.extend(["", *_table_lines(grid, step, where, full=full, width=width)])
            elif isinstance(value, dict):
                rows = scalar_rows(value)
                limit = len(rows) if full else MAX_ROWS
                for index, (key, number) in enumerate(rows[:limit]):
                    flat.append([name if index == 0 else "", key if full else cut(key, CELL), cell(number)])
                if len(rows) > limit:
                    cut_notes.append(f"{name}: {len(rows) - limit} more rows in {where}")
            elif isinstance(value, list) and value:
                lists.append(_list_line(name, value, step, full=full, width=width))
        if flat:
            groups.append((step, flat))
    lines = _flat_lines(groups)
    lines = [*lines, *(f"({text})" for text in cut_notes), *([""] + lists if lists else []), *tables]
    if report:
        lines.extend(["", f"report: {report}"])
    return lines[1:] if lines and lines[0] == "" else lines


def _grid(name: str, value: Any) -> Grid | None:
    """A mapping of rows or a list of rows as a table; None for any other value."""
    table = row_table(value)
    if table is not None:
        return Grid(name, *table)
    return list_grid(name, value) if isinstance(value, list) else None


def _content(grid: Grid) -> tuple:
    """What a table says, whatever its layout: each row's cells as a sorted tuple (a numbered list of rows
    counts its name column as a cell, as a mapping of rows counts its keys), the rows sorted."""
    numbered = all(key == str(i) for i, (key, _) in enumerate(grid.rows, start=1))
    rows = [([] if numbered else [key]) + list(values) for key, values in grid.rows]
    return tuple(sorted(tuple(sorted(cell(v) for v in row)) for row in rows))


def _flat_lines(groups: list[tuple[str, list[list[str]]]]) -> list[str]:
    """The numbers' table, a ``from <step>:`` line above each step's rows (when the step is known)."""
    rows = [row for _, flat in groups for row in flat]
    if not rows:
        return []
    aligned = align([["variable", "result", "value"], *rows], [False, False, True])
    lines = [aligned[0], "-" * len(aligned[0])]
    start = 1
    for step, flat in groups:
        if step:
            lines.append(f"from {step}:")
        lines.extend(aligned[start : start + len(flat)])
        start += len(flat)
    return lines


def _table_lines(grid: Grid, step: str, where: str, *, full: bool, width: int) -> list[str]:
    lines, note = fitted(grid, width=width, max_rows=len(grid.rows) if full else TABLE_ROWS, full=full)
    parts = [f"from {step}"] if step else []
    if note:
        parts += [note, f"all in {where}"] if "shown" in note else [note]
    if parts:
        lines.extend(_wrapped(f"({grid.name}: {'; '.join(parts)})", width))
    return lines


def _list_line(name: str, items: list[Any], step: str, *, full: bool, width: int) -> str:
    """``name: N items: a, b, … (step)``, cut to ``width`` unless ``full``."""
    scalar = all(item is None or isinstance(item, (int, float, str, bool)) for item in items)
    shown = items if full else items[:LIST_ITEMS]
    head = f"{name}: {len(items)} item{'s' if len(items) != 1 else ''}"
    text = (
        f"{head}: {', '.join(cell(item) for item in shown)}" if scalar else f"{head}, each a {type(items[0]).__name__}"
    )
    if scalar and len(shown) < len(items):
        text += ", …"
    tail = f" ({step})" if step else ""
    return text + tail if full or len(text) + len(tail) <= width else text[: width - len(tail) - 1] + "…" + tail


def _where(name: str, memory: dict[str, Any], producers: dict[str, str], saved: dict[str, str]) -> str:
    """Where ``name``'s whole value is: its step's JSON result file (``result_path``, else another ``*path``
    variable naming a .json file, e.g. ``table_path``), else the run's memory.json; a file the run folder
    holds is named there (``the run folder's files/x.json``: short, and the ``done:`` line names the folder)."""
    step = producers.get(name)
    files = [
        (variable != "result_path", value)
        for variable, value in memory.items()
        if step and producers.get(variable) == step and variable.endswith("path")
        if isinstance(value, str) and value.endswith(".json")
    ]
    if not files:
        return "the run folder's memory.json"
    path = min(files)[1]
    return f"the run folder's {saved[path]}" if path in saved else short_path(path)


def short_path(path: str) -> str:
    """``path`` relative to the working directory when it lies inside it."""
    import os

    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


def _wrapped(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at ``; `` (a path stays whole)."""
    lines = [""]
    for part in text.split("; "):
        joined = f"{lines[-1]}; {part}" if lines[-1] else part
        if len(joined) < width or not lines[-1]:  # room for the ';' a break adds
            lines[-1] = joined
        else:
            lines[-1] += ";"
            lines.append(f" {part}")
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
