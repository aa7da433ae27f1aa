"""${VAR} expansion and parameter.yaml loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from servers.core.errors import InputError
from servers.core.settings import env_references, expand_env, load_parameter_file


def test_expand_env_recurses_and_keeps_other_text() -> None:
    env = {"KEY": "abc", "HOST": "h"}
    value = {"a": "${KEY}", "b": ["x-${HOST}-y", 3], "c": "$KEY stays"}
    assert expand_env(value, env) == {"a": "abc", "b": ["x-h-y", 3], "c": "$KEY stays"}
    assert env_references(value) == {"KEY", "HOST"}


def test_expand_env_names_missing_variable() -> None:
    with pytest.raises(InputError, match="environment variable NOPE is not set"):
        expand_env("${NOPE}", {})


def test_load_parameter_file_errors_name_the_line(tmp_path: Path) -> None:
    file = tmp_path / "parameter.yaml"
    file.write_text("a: 1\nb: [\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"parameter\.yaml:\d+: invalid YAML"):
        load_parameter_file(file)
    file.write_text("- 1\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected a mapping"):
        load_parameter_file(file)
    assert load_parameter_file(tmp_path / "absent.yaml") == {}
