"""The benchmark server over MCP: in-process, and once as a real stdio subprocess."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from servers.benchmark.server import SPEC
from tests.conftest import ROOT

SAMPLE = ROOT / "data" / "sample_qa.jsonl"


def sample_rows() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


@pytest.mark.anyio
async def test_get_data_with_defaults_loads_the_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    rows = sample_rows()
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("get_data", {})
    assert not result.is_error
    data = result.structured_content
    assert data["q_ls"] == [r["question"] for r in rows]
    assert data["gt_ls"] == [r["golden_answers"] for r in rows]
    assert data["id_ls"] == [r["id"] for r in rows]
    assert data["data_info"]["kept_rows"] == len(rows)
    assert "pred_ls" not in data


@pytest.mark.anyio
async def test_get_data_reports_dropped_rows(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"q": "a", "p": "x"}\n{"q": "b"}\n{"q": "c", "p": "z"}\n', encoding="utf-8")
    spec = {"path": str(path), "key_map": {"q_ls": "q", "pred_ls": "p"}}
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("get_data", {"benchmark": spec})
    data = result.structured_content
    assert (data["q_ls"], data["pred_ls"]) == (["a", "c"], ["x", "z"])
    assert data["data_info"]["dropped_rows"] == 1
    assert data["data_info"]["dropped_reasons"] == {"missing or null field 'p'": 1}
    assert data["data_info"]["notes"] == {}


@pytest.mark.anyio
async def test_get_data_reports_beir_qrels_edges(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "one"}\n', encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "first"}\n', encoding="utf-8")
    (tmp_path / "qrels" / "test.tsv").write_text("q1\td1\t1\nq1\td9\t1\nq4\td1\t1\n", encoding="utf-8")
    spec = {"path": str(tmp_path), "key_map": {"q_ls": "question", "gt_ls": "relevant_docs"}}
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("get_data", {"benchmark": spec})
    info = result.structured_content["data_info"]
    assert result.structured_content["gt_ls"] == [["d1", "d9"]]
    assert (info["total_rows"], info["kept_rows"], info["dropped_rows"]) == (2, 1, 1)
    assert info["dropped_reasons"] == {"qrels query not in queries.jsonl (test.tsv)": 1}
    assert info["notes"] == {"qrels lines whose corpus-id is not in corpus.jsonl (test.tsv)": 1}


@pytest.mark.anyio
async def test_get_data_bad_line_is_a_tool_error(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"q": "a"}\n{"q": \n', encoding="utf-8")
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("get_data", {"benchmark": {"path": str(path), "key_map": {"q_ls": "q"}}})
    assert result.is_error
    assert f"{path}:2: invalid JSON" in result.content[0].text


@pytest.mark.anyio
async def test_get_data_over_real_stdio(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("question,answer\nq1,a1\nq2,a2\n", encoding="utf-8")
    env = {"PYTHONPATH": str(ROOT), "ULTRA_READ_ROOTS": str(tmp_path)}  # tmp_path is outside the project
    params = StdioServerParameters(command=sys.executable, args=["-m", "servers.benchmark"], cwd=str(ROOT), env=env)
    async with Client(params) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["get_data"].input_schema["properties"]["benchmark"]["default"]["path"] == "data/sample_qa.jsonl"
        result = await client.call_tool(
            "get_data",
            {"benchmark": {"path": str(path), "key_map": {"q_ls": "question", "gt_ls": "answer"}, "limit": 1}},
        )
    assert result.structured_content["q_ls"] == ["q1"]
    assert result.structured_content["gt_ls"] == ["a1"]


@pytest.mark.anyio
async def test_data_info_names_the_users_file_unless_a_name_is_given(tmp_path: Path) -> None:
    """A parameter file built from the defaults, with only the path changed to one's own file, names that
    file in data_info (not the sample's name)."""
    from ultra_kit.settings import defaults

    path = tmp_path / "my_questions.jsonl"
    path.write_text('{"question": "q", "golden_answers": ["a"], "id": "1"}\n', encoding="utf-8")
    built = defaults("benchmark")["benchmark"]
    async with Client(SPEC.create_app()) as client:
        for name, expected in ((built["name"], "my_questions"), ("my_eval", "my_eval")):
            spec = {**built, "path": str(path), "name": name}
            result = await client.call_tool("get_data", {"benchmark": spec})
            assert result.structured_content["data_info"]["name"] == expected
