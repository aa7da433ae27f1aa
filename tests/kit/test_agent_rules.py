"""The factory's general rules: partial mapping settings, unknown names, absolute paths, ULTRA_HOME."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from ultra_base.errors import InputError
from ultra_kit.factory import with_settings
from ultra_kit.paths.project_root import absolute_paths, enter_project_root
from ultra_kit.settings import complete_mapping, merge_mapping
from ultra_kit.wrapping.errors import ToolCrash


class Spec(TypedDict, total=False):
    path: str
    limit: int


class NoContext:
    pass


def tool(*, llm: dict[str, Any], spec: Spec, ctx: NoContext | None = None) -> dict[str, Any]:
    return {"llm": llm, "spec": spec}


SETTINGS = {
    "llm": {"base_url": "https://a.example/v1", "api_key": "${ULTRA_TEST_KEY}", "model_id": "m", "extra": {"x": 1}},
    "spec": {"path": "data/x.jsonl", "limit": -1},
}


def wrapped(*, in_process: bool = False):
    return with_settings(tool, SETTINGS, context_type=NoContext, raise_as=ToolCrash, in_process=in_process)


def test_partial_mapping_takes_left_out_keys_one_level_deep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ULTRA_TEST_KEY", "secret-value")
    result = wrapped()(llm={"model_id": "n", "extra": {"y": 2}}, spec={"limit": 1})
    assert result["llm"] == {
        "base_url": "https://a.example/v1",
        "api_key": "***",  # expanded for the tool, redacted in what it returns
        "model_id": "n",
        "extra": {"y": 2},  # a mapping inside a setting is taken whole
    }
    assert result["spec"] == {"path": "data/x.jsonl", "limit": 1}


def test_another_base_url_without_api_key_gets_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ULTRA_TEST_KEY", raising=False)  # not even looked up
    result = wrapped(in_process=True)(llm={"base_url": "http://localhost:8000/v1"}, spec={})
    assert result["llm"]["api_key"] == ""  # in process; over MCP a call must give api_key (test_key_hosts.py)
    assert merge_mapping({"api_key": "k", "backend": "openai"}, {"backend": "local"})["api_key"] == ""
    assert merge_mapping({"api_key": "k", "base_url": "u"}, {"model_id": "x"})["api_key"] == "k"


def test_argument_check_names_the_closest_parameter_and_mapping_key() -> None:
    check = wrapped().__argument_check__
    assert check.parameters == ("llm", "spec")  # the Context parameter is not an argument
    assert check.problem({"llm": {}}) is None
    assert (
        check.problem({"spek": {}})
        == "'tool' has no parameter 'spek' (did you mean 'spec'?); its parameters: ['llm', 'spec']"
    )
    assert (
        check.problem({"spec": {"limt": 1}})
        == "'spec' has no key 'limt' (did you mean 'limit'?); its keys: ['path', 'limit']"
    )
    assert check.problem({"spec": '{"pth": "x"}'}).startswith("'spec' has no key 'pth' (did you mean 'path'?)")
    assert "'zzz'; its parameters" in check.problem({"zzz": 1})  # nothing close: no guess


def test_complete_mapping_suggests_the_closest_key() -> None:
    with pytest.raises(InputError, match=r"known keys: \[.*\]; did you mean 'timeot' -> 'timeout'\?"):
        complete_mapping({"timeot": 3}, server="judge", setting="judge_llm")


def test_relative_paths_in_results_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "r.json").write_text("{}")
    result = absolute_paths(
        {
            "result_path": "out/r.json",
            "run_paths": ["out/r.json", "missing.trec"],
            "info": {"path": "out", "model_path": "smollm2", "url_path": "https://x/y"},
            "note": "out/r.json",  # not a path key: left alone
        }
    )
    assert result == {
        "result_path": str(tmp_path / "out" / "r.json"),
        "run_paths": [str(tmp_path / "out" / "r.json"), "missing.trec"],
        "info": {"path": str(tmp_path / "out"), "model_path": "smollm2", "url_path": "https://x/y"},
        "note": "out/r.json",
    }


def test_ultra_home_becomes_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ULTRA_HOME", raising=False)
    assert enter_project_root() is None and Path.cwd() == tmp_path
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("ULTRA_HOME", str(home))
    assert enter_project_root() == home and Path(os.getcwd()) == home
    monkeypatch.setenv("ULTRA_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(SystemExit, match="ULTRA_HOME=.*nowhere: cannot work in that folder"):
        enter_project_root()
