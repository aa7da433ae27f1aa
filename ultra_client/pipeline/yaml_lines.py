"""YAML loading that remembers the line of every mapping, list and string, for error messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ultra_client.errors import UltraError
from ultra_kit import yaml_limits as limits
from ultra_kit.errors import InputError


class LineDict(dict):
    """A dict that knows the 1-based line it started on."""

    line: int = 0


class LineList(list):
    """A list that knows the 1-based line it started on."""

    line: int = 0


class LineStr(str):
    """A string that knows the 1-based line it stood on."""

    line: int = 0


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


def require_regular_file(path: Path, kind: str = "") -> None:
    """UltraError unless ``path`` is a regular file; a directory or FIFO is named as such (reading a FIFO blocks)."""
    try:
        limits.require_regular_file(path, kind)
    except InputError as exc:
        raise UltraError(str(exc)) from None


def read_text_file(path: Path, kind: str = "") -> str:
    """The text of ``path``, a regular file of any size (data given to ``ultra call``); UltraError otherwise."""
    require_regular_file(path, kind)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UltraError(f"{path}: cannot read: {exc}") from None


def load_yaml_with_lines(path: Path, kind: str = "") -> Any:
    """Load ``path`` (a pipeline or parameter file); syntax errors, duplicate keys and the size, depth and
    alias limits of ``ultra_kit.yaml_limits`` become UltraError at file:line."""
    try:
        return limits.load_limited_yaml(path, loader=_LineLoader, kind=kind)
    except InputError as exc:
        raise UltraError(str(exc)) from None
    except UltraError as exc:
        raise UltraError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise UltraError(f"{where}: YAML syntax error: {problem}") from None


def plain(value: Any) -> Any:
    """Convert LineDict/LineList/LineStr back to plain dict/list/str (for writing and JSON)."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value
