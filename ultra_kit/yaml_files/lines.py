"""YAML files read with their lines, so a mistake found after loading is still reported at file:line.

Every mapping, list and string of the file knows the 1-based line it started on (``LineDict``,
``LineList``, ``LineStr``: a dict, list and str with ``.line``); a key is a ``LineStr`` too, so
``line_of(mapping, key)`` finds the line of one entry. ``plain`` turns them back into dict, list and
str (for YAML writers, which refuse subclasses). A duplicate key is refused, not silently overwritten.

``load_yaml_with_lines`` is the one loader of the files users write by hand: pipelines, parameter,
gate and sweep files (the client), rubric files (the judge server). It applies the size, depth and
alias limits of ``ultra_base.file_limits``; every problem is an ``InputError`` naming the file
and the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ultra_base.errors import InputError
from ultra_base.file_limits import load_limited_yaml


class LineDict(dict):
    """A dict that knows the 1-based line it started on."""

    line: int = 0


class LineList(list):
    """A list that knows the 1-based line it started on."""

    line: int = 0


class LineStr(str):
    """A string that knows the 1-based line it stood on."""

    line: int = 0


class _DuplicateKey(Exception):
    def __init__(self, key: Any, line: int) -> None:
        super().__init__(key, line)
        self.key, self.line = key, line


class _LineLoader(yaml.SafeLoader):
    """SafeLoader building LineDict, LineList and LineStr."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    mapping = LineDict()
    mapping.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in mapping:
            raise _DuplicateKey(key, key_node.start_mark.line + 1)
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


def load_yaml_with_lines(path: Path, kind: str = "") -> Any:
    """The YAML document of ``path``, its mappings, lists and strings carrying ``.line``.

    ``kind`` names the file in messages (``"pipeline"``: "pipeline file not found"). A file that is not
    a regular file, is over a size, depth or alias limit, does not parse or repeats a key is an
    InputError at file:line (``p.yaml:4: YAML syntax error: ...``, ``p.yaml: line 3: duplicate key 'a'``).
    """
    try:
        return load_limited_yaml(path, loader=_LineLoader, kind=kind)
    except _DuplicateKey as exc:
        raise InputError(f"line {exc.line}: duplicate key '{exc.key}'", path=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark is not None else None
        raise InputError(f"YAML syntax error: {problem}", path=str(path), line=line) from None


def line_of(value: Any, key: Any = None) -> int | None:
    """The line ``value`` (or the entry ``key`` of the mapping ``value``) stood on, or None where it was not
    read with lines (a value given in a call, a key that is not a string)."""
    if key is not None:
        for known in getattr(value, "keys", list)():
            if known == key and getattr(known, "line", None):
                return known.line
    return getattr(value, "line", None) or None


def plain(value: Any) -> Any:
    """Convert LineDict/LineList/LineStr back to plain dict/list/str (for writing and JSON)."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value
