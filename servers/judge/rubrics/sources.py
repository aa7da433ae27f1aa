"""Where rubrics come from: the ``rubrics`` setting, or ``rubrics_path``, a YAML file of them read with lines.

The file is a list of declarations (or a mapping with the key ``rubrics`` holding one), read inside the
read roots and within the YAML size, depth and alias limits (``ultra_kit.yaml_limits``); its mappings
remember their lines, so a mistake is reported at file:line.
"""

from __future__ import annotations

from typing import Any

import yaml

from servers.judge.rubrics.declaration import Rubric, read_rubrics
from ultra_kit.errors import InputError, existing_file
from ultra_kit.yaml_limits import load_limited_yaml


class _Lines(dict):
    """A mapping read from a file, with its line and each key's line (for ``declaration.line_of``)."""

    line = 0
    key_lines: dict[Any, int]


class _LinesList(list):
    line = 0


class _Loader(yaml.SafeLoader):
    """Builds ``_Lines`` and ``_LinesList`` that know where they stood."""


def _mapping(loader: _Loader, node: yaml.MappingNode) -> _Lines:
    loader.flatten_mapping(node)
    built = _Lines()
    built.line, built.key_lines = node.start_mark.line + 1, {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        built.key_lines[key] = key_node.start_mark.line + 1
        built[key] = loader.construct_object(value_node, deep=True)
    return built


def _sequence(loader: _Loader, node: yaml.SequenceNode) -> _LinesList:
    built = _LinesList(loader.construct_object(child, deep=True) for child in node.value)
    built.line = node.start_mark.line + 1
    return built


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


def rubrics_file(path: str) -> list[Rubric]:
    """The rubrics declared in the YAML file at ``path`` (inside the read roots), checked at file:line."""
    file = existing_file(path, what="rubrics file")
    try:
        data = load_limited_yaml(file, loader=_Loader, kind="rubrics")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = getattr(exc, "problem", None) or exc
        raise InputError(f"YAML syntax error: {problem}", path=str(path), line=line) from None
    if isinstance(data, dict) and set(data) == {"rubrics"}:
        data = data["rubrics"]
    if not isinstance(data, list):
        raise InputError("a rubrics file is a list of declarations (or {rubrics: [...]})", path=str(path), line=1)
    return read_rubrics(data, path=str(path))


def declared_rubrics(rubrics: Any, rubrics_path: str, *, parameter_file: str | None = None) -> list[Rubric]:
    """The rubrics of a call: ``rubrics`` (from ``parameter_file`` when known) or the file ``rubrics_path``."""
    given = rubrics not in (None, [], "")
    if given and rubrics_path:
        raise InputError("give rubrics or rubrics_path, not both")
    if rubrics_path:
        return rubrics_file(rubrics_path)
    if not given:
        raise InputError("no rubric: set rubrics (a list of declarations) or rubrics_path (a YAML file of them)")
    return read_rubrics(rubrics, path=parameter_file)


def check_rubrics(value: Any, *, parameter_file: str) -> None:
    """``ultra build``'s check of the ``rubrics`` setting (``ServerSpec.setting_checks``): [] is left for the call."""
    if value not in (None, []):
        read_rubrics(value, path=parameter_file)


def check_rubrics_path(value: Any, *, parameter_file: str) -> None:
    """``ultra build``'s check of ``rubrics_path``: the file's declarations, at their file:line."""
    if not isinstance(value, str):
        raise InputError("rubrics_path must be the path of a YAML file ('' = none)", path=parameter_file,
                         line=getattr(value, "line", None))  # fmt: skip
    if value:
        rubrics_file(value)
