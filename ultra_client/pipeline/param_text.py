"""A rebuild's changes applied to the parameter file's text, so that the user's comments and layout stay.

Only the lines of added or dropped settings change: an added setting is written at the end of its
server's section (a new server's section at the end of the file), a dropped one loses its lines. A file
this cannot edit line by line (a server's settings written in flow style, ``{...}``) is rewritten
whole, and the caller says that its comments went.
"""

from __future__ import annotations

from typing import Any

import yaml

from ultra_kit.yaml_files.lines import LineDict


def _dump(name: str, value: Any, indent: str) -> list[str]:
    text = yaml.safe_dump({name: value}, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return [indent + line for line in text.splitlines()]


def _is_top_key(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line.startswith("#")


def _section_end(lines: list[str], start: int) -> int:
    """The index after the last content line of the section whose key is at ``start`` (0-based): trailing
    blank and comment lines belong to what follows."""
    end = next((i for i in range(start + 1, len(lines)) if _is_top_key(lines[i])), len(lines))
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _value_end(lines: list[str], start: int, section_end: int, indent: int) -> int:
    """The index after the last line of the setting at ``start``: its value runs until the next line at
    the setting's indentation or less (comments and blank lines between stay with what follows)."""
    end = start + 1
    for i in range(start + 1, section_end):
        line = lines[i]
        if line.strip() and not line.lstrip().startswith("#"):
            if len(line) - len(line.lstrip()) <= indent:
                break
            end = i + 1
    return end


def merge_text(text: str, data: LineDict, merged: dict[str, dict[str, Any]]) -> str | None:
    """``text`` (whose parse, with lines, is ``data``) changed to hold exactly ``merged``'s settings, or None
    when a section is in flow style and cannot be edited line by line."""
    lines = text.splitlines()
    removals: list[tuple[int, int]] = []
    inserts: dict[int, list[str]] = {}  # insert before this 0-based index
    appended: list[str] = []
    for alias, settings in data.items():
        start = alias.line - 1
        if alias not in merged:
            end = _section_end(lines, start)
            removals.append((start, end))
            continue
        values = settings or {}
        added = {name: value for name, value in merged[alias].items() if name not in values}
        if not added and all(name in merged[alias] for name in values):
            continue  # this section stays as written
        if not lines[start].split("#")[0].rstrip().endswith(":") or not isinstance(values, dict):
            return None  # flow style ({...}) or not a mapping
        section_end = _section_end(lines, start)
        indents = [len(lines[k.line - 1]) - len(lines[k.line - 1].lstrip()) for k in values]
        indent = min(indents) if indents else 2
        for name in values:
            if name not in merged[alias]:
                removals.append((name.line - 1, _value_end(lines, name.line - 1, section_end, indent)))
        new = [line for name, value in added.items() for line in _dump(name, value, " " * indent)]
        if new:
            inserts.setdefault(section_end, []).extend(new)
    for alias, settings in merged.items():
        if alias not in data:
            appended += [f"{alias}:"] + [line for name, value in settings.items() for line in _dump(name, value, "  ")]
    out: list[str] = []
    removed = {i for start, end in removals for i in range(start, end)}
    for i, line in enumerate([*lines, None]):
        out += inserts.get(i, [])
        if line is not None and i not in removed:
            out.append(line)
    out += appended
    return "\n".join(out) + "\n"
