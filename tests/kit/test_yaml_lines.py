"""The kit's one line-aware YAML loader (``ultra_kit.yaml_files.lines``), on real files: lines of mappings,
lists, strings and keys; duplicate keys, syntax errors and the limits refused at file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ultra_base.errors import InputError
from ultra_base.file_limits import MAX_DEPTH
from ultra_kit.yaml_files.lines import LineDict, LineList, LineStr, line_of, load_yaml_with_lines, plain

TEXT = """\
# a comment
servers:
  ev: servers/evaluation
pipeline:
  - ev.evaluate
  - name: x
    n: 3
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_mapping_list_string_and_key_knows_its_line(tmp_path: Path) -> None:
    data = load_yaml_with_lines(write(tmp_path, TEXT), "pipeline")
    assert isinstance(data, LineDict) and data.line == 2
    assert isinstance(data["pipeline"], LineList) and data["pipeline"].line == 5
    step = data["pipeline"][0]
    assert isinstance(step, LineStr) and step == "ev.evaluate" and step.line == 5
    assert data["pipeline"][1].line == 6 and line_of(data["pipeline"][1], "n") == 7
    assert line_of(data, "pipeline") == 4 and line_of(data["servers"], "ev") == 3
    assert line_of(data["pipeline"][1]["n"]) is None  # an integer carries no line
    assert line_of({"a": 1}, "a") is None  # a value given in a call, not read from a file


def test_plain_values_are_what_yaml_and_json_write(tmp_path: Path) -> None:
    data = plain(load_yaml_with_lines(write(tmp_path, TEXT)))
    expected = {"servers": {"ev": "servers/evaluation"}, "pipeline": ["ev.evaluate", {"name": "x", "n": 3}]}
    assert data == expected and type(data["pipeline"][0]) is str and type(data["pipeline"]) is list
    assert yaml.safe_load(yaml.safe_dump(data)) == expected and json.loads(json.dumps(data)) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 1\nb:\n  c: 2\n  c: 3\n", "p.yaml: line 4: duplicate key 'c'"),
        ("a: [1, 2\nb: 3\n", "p.yaml:2: YAML syntax error: expected ',' or ']', but got ':'"),
        ("a: !!python/object:os.system x\n", "p.yaml:1: YAML syntax error"),
        ("a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n", f"p.yaml:1: nested more than {MAX_DEPTH}"),
    ],
)
def test_mistakes_are_input_errors_at_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load_yaml_with_lines(path, "pipeline")
    assert str(caught.value).startswith(str(path.parent) + "/") and message in str(caught.value)


def test_a_folder_or_missing_file_is_named_with_its_kind(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"pipes: is a directory, expected a gate YAML file"):
        (tmp_path / "pipes").mkdir()
        load_yaml_with_lines(tmp_path / "pipes", "gate")
    with pytest.raises(InputError, match=r"none\.yaml: rubrics file not found"):
        load_yaml_with_lines(tmp_path / "none.yaml", "rubrics")
