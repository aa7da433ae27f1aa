"""YAML loading that remembers the line of every mapping, list and string, for error messages."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import yaml

from ultra_client.errors import UltraError

MAX_DEPTH = 100  # nesting levels of mappings and lists
MAX_ALIAS_NODES = 100_000  # nodes that aliases may add when expanded (an "alias bomb" adds billions)


class LineDict(dict):
    """A dict that knows the 1-based line it started on."""

    line: int = 0


class LineList(list):
    """A list that knows the 1-based line it started on."""

    line: int = 0


class LineStr(str):
    """A string that knows the 1-based line it stood on."""

    line: int = 0


class ShapeError(UltraError):
    """A YAML document nested too deeply or expanding too far, at ``line``."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line, self.problem = line, problem


class _LineLoader(yaml.SafeLoader):
    """SafeLoader building LineDict, LineList and LineStr."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    mapping = LineDict()
    mapping.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in mapping:
            raise UltraError(f"line {key_node.start_mark.line + 1}: duplicate key '{key}'")
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> LineList:
    items = LineList(loader.construct_object(child, deep=True) for child in node.value)
    items.line = node.start_mark.line + 1
    return items


def _construct_str(loader: _LineLoader, node: yaml.ScalarNode) -> LineStr:
    text = LineStr(loader.construct_scalar(node))
    text.line = node.start_mark.line + 1
    return text


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)
_LineLoader.add_constructor("tag:yaml.org,2002:str", _construct_str)


def check_shape(text: str) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH or whose aliases expand to more than MAX_ALIAS_NODES nodes.

    Walks the parser's events (no recursion, nothing expanded) and stops at the first excess, so a
    bomb or a 5,000-level document is refused in milliseconds. Raises ShapeError.
    """
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (expanded nodes, height)
    stack: list[list[Any]] = []  # open collections: [anchor, nodes, height]
    added = 0

    def close(anchor: str | None, nodes: int, height: int) -> None:
        if anchor:
            sizes[anchor] = (nodes, height)
        if stack:
            stack[-1][1] += nodes
            stack[-1][2] = max(stack[-1][2], height)

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append([event.anchor, 1, 0])
            if len(stack) > MAX_DEPTH:
                raise ShapeError(line, f"nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, nodes, height = stack.pop()
            close(anchor, nodes, height + 1)
        elif isinstance(event, yaml.ScalarEvent):
            close(event.anchor, 1, 0)
        elif isinstance(event, yaml.AliasEvent):
            if any(frame[0] == event.anchor for frame in stack):
                raise ShapeError(line, f"alias *{event.anchor} refers to a mapping or list that contains it")
            nodes, height = sizes.get(event.anchor, (1, 0))  # an undefined alias is the loader's error
            if len(stack) + height > MAX_DEPTH:
                raise ShapeError(line, f"alias *{event.anchor} nests more than {MAX_DEPTH} levels deep")
            added += nodes - 1
            if added > MAX_ALIAS_NODES:
                raise ShapeError(
                    line,
                    f"aliases expand to more than {MAX_ALIAS_NODES:,} values (an alias bomb?); "
                    "write the values out instead of repeating aliases",
                )
            close(None, nodes, height)


def require_regular_file(path: Path, kind: str = "") -> None:
    """UltraError unless ``path`` is a regular file; a directory or FIFO is named as such (reading a FIFO blocks)."""
    noun = f"{kind} " if kind else ""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise UltraError(f"{path}: {noun}file not found") from None
    except OSError as exc:
        raise UltraError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        what = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise UltraError(f"{path}: is {what}, expected a {noun}YAML file")


def read_text_file(path: Path, kind: str = "") -> str:
    """The text of ``path``, a regular file (a directory, FIFO or unreadable file is an UltraError)."""
    require_regular_file(path, kind)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UltraError(f"{path}: cannot read: {exc}") from None


def load_yaml_with_lines(path: Path, kind: str = "") -> Any:
    """Load ``path``; syntax errors, duplicate keys, deep nesting and alias bombs become UltraError at file:line."""
    text = read_text_file(path, kind)
    try:
        check_shape(text)
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass
    except ShapeError as exc:
        raise UltraError(f"{path}:{exc.line}: {exc.problem}") from None
    except UltraError as exc:
        raise UltraError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise UltraError(f"{where}: YAML syntax error: {problem}") from None


def load_yaml_value(text: str) -> Any:
    """A command-line value parsed as YAML, with the same depth and alias limits as files."""
    check_shape(text)
    return yaml.safe_load(text)


def plain(value: Any) -> Any:
    """Convert LineDict/LineList/LineStr back to plain dict/list/str (for writing and JSON)."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value
