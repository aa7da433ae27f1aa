"""${VAR} expansion and parameter.yaml loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from ultra_base.errors import InputError
from ultra_kit.settings import env_references, expand_env, load_parameter_file


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


def test_defaults_reads_the_servers_parameter_file() -> None:
    import yaml

    from ultra_kit.settings import CAPS_KEY, SERVERS_DIR, defaults, load_caps

    for folder in sorted(SERVERS_DIR.glob("*/parameter.yaml")):
        whole = yaml.safe_load(folder.read_text(encoding="utf-8"))
        assert load_caps(folder) == whole.pop(CAPS_KEY, {})  # the caps are not settings
        assert defaults(folder.parent.name) == whole
    with pytest.raises(InputError, match="no server named 'nosuch'.*evaluation"):
        defaults("nosuch")


def test_complete_mapping_fills_left_out_keys_from_parameter_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    from ultra_kit.settings import complete_mapping, defaults

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-value")
    full = defaults("judge")["judge_llm"]
    merged = complete_mapping({"model_id": "m", "timeout": 5}, server="judge", setting="judge_llm")
    assert merged["model_id"] == "m" and merged["timeout"] == 5
    assert merged["max_workers"] == full["max_workers"] and merged["api_key"] == "sk-test-value"
    assert set(merged) == set(full)
    with pytest.raises(InputError, match=r"judge_llm has unknown keys \['timeot'\]; known keys: .*timeout"):
        complete_mapping({"timeot": 5}, server="judge", setting="judge_llm")
    with pytest.raises(InputError, match="judge_llm must be a mapping"):
        complete_mapping("gpt", server="judge", setting="judge_llm")
    with pytest.raises(InputError, match="not a mapping setting"):
        complete_mapping({}, server="judge", setting="save_path")
