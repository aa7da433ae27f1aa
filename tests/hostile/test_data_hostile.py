"""Hostile datasets: NaN values and JSON nested 100,000 levels deep."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from servers.benchmark.server import SPEC
from tests.conftest import ROOT, run_ultra
from tests.support.together import at_once
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools

KEY_MAP = {"q_ls": "q", "gt_ls": "a"}


def get_data(path: Path, key_map: dict | None = None):
    spec = {"path": str(path), "key_map": key_map or KEY_MAP}
    return anyio.run(call_local_tool, local_tools(SPEC)["get_data"], {"benchmark": spec})


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_nan_is_dropped_like_a_missing_field(tmp_path: Path, suffix: str) -> None:
    rows = ['{"q": "kept", "a": ["x"]}', '{"q": NaN, "a": ["y"]}', '{"q": "nested", "a": [NaN]}', '{"q": "z"}']
    path = tmp_path / f"d{suffix}"
    path.write_text("[" + ",".join(rows) + "]" if suffix == ".json" else "\n".join(rows) + "\n")
    data = get_data(path)
    assert (data["q_ls"], data["gt_ls"]) == (["kept"], [["x"]])
    assert data["data_info"]["dropped_reasons"] == {
        "NaN in field 'q'": 1,
        "NaN in field 'a'": 1,
        "missing or null field 'a'": 1,
    }
    assert (data["data_info"]["kept_rows"], data["data_info"]["dropped_rows"]) == (1, 3)


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("deep.json", '[{"q": "a", "a": ["b"]},\n' + DEEP + "]", 2),
        ("deep.jsonl", '{"q": "a", "a": ["b"]}\n\n{"q": ' + DEEP + "}\n", 3),
    ],
)
def test_deep_json_names_file_and_line(tmp_path: Path, name: str, text: str, line: int) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ToolFailure) as caught:
        get_data(path)
    assert f"{path}:{line}: JSON nested deeper than 100 levels" in str(caught.value)


def test_depth_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_text(json.dumps({"q": "a", "a": json.loads("[" * 98 + '"x"' + "]" * 98)}) + "\n")
    data = get_data(path)
    assert data["q_ls"] == ["a"] and data["data_info"]["kept_rows"] == 1


def test_ultra_call_on_a_deep_file_and_on_nan(tmp_path: Path) -> None:
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    nan = tmp_path / "nan.json"
    rows = [
        '{"question": NaN, "golden_answers": ["x"], "id": 1}',
        '{"question": "q", "golden_answers": ["y"], "id": 2}',
    ]
    nan.write_text("[" + ", ".join(rows) + "]")
    ran = at_once({path: lambda path=path: run_ultra("call", "benchmark.get_data", f"benchmark.path={path}", cwd=ROOT)
                   for path in (deep, nan)})  # both calls at once  # fmt: skip
    done = ran[deep]
    assert done.returncode != 0 and "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert f"{deep}:1: JSON nested deeper than 100 levels" in done.stderr
    done = ran[nan]
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["q_ls"] == ["q"] and None not in data["q_ls"]
    assert data["data_info"]["dropped_reasons"] == {"NaN in field 'question'": 1}


def test_an_empty_dataset_path_says_so() -> None:
    done = run_ultra("call", "benchmark.get_data", "benchmark={path: ''}", cwd=ROOT)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "benchmark.path is empty; give a dataset file" in done.stderr
    assert "BEIR folder" not in done.stderr.split("give a dataset file")[0]
