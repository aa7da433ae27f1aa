"""The ``evaluate`` and ``evaluate_mtrag`` MCP tools in-process: shapes, saved files, errors, defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from servers.evaluation.server import SPEC
from tests.evaluation.helpers import score_answers
from ultra_kit.settings import load_parameter_file

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "data" / "answers" / "mtrag_gpt4o_answers.jsonl"
SAMPLE = ROOT / "data" / "mtrag" / "mtrag_sample.jsonl"


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.anyio
async def test_evaluate_returns_and_saves_ultrarag_shape(tmp_path) -> None:
    records = load(ANSWERS)[:25]
    preds = [r["pred_answer"] for r in records]
    golds = [r["golden_answers"] for r in records]
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool(
            "evaluate", {"pred_ls": preds, "gt_ls": golds, "metrics": ["f1", "rouge-l"], "save_path": str(tmp_path)}
        )
    assert not result.is_error
    data = result.structured_content
    expected = score_answers(preds, golds, ["f1", "rouge-l"])
    assert data["eval_res"] == expected
    assert data["settings"]["metrics"] == ["f1", "rouge-l"] and data["settings"]["normalize"] == "squad"
    saved = json.loads(Path(data["result_path"]).read_text(encoding="utf-8"))
    assert Path(data["result_path"]).parent == tmp_path and Path(data["result_path"]).name.startswith("evaluate_")
    assert {k: saved[k] for k in expected} == expected
    assert saved["settings"] == data["settings"] and "ultra-eval" in saved["versions"]


@pytest.mark.anyio
async def test_evaluate_file_carries_item_ids(tmp_path) -> None:
    arguments = {"pred_ls": ["Paris", "Rome", ""], "gt_ls": [["paris"], ["Milan"], []], "metrics": ["em"]}
    async with Client(SPEC.create_app()) as client:
        named = await client.call_tool(
            "evaluate", {**arguments, "id_ls": ["q7", "q3", 11], "save_path": str(tmp_path / "named.json")}
        )
        default = await client.call_tool("evaluate", {**arguments, "save_path": str(tmp_path / "default.json")})
        short = await client.call_tool("evaluate", {**arguments, "id_ls": ["q7"], "save_path": str(tmp_path)})
    assert not named.is_error and not default.is_error
    saved = json.loads((tmp_path / "named.json").read_text(encoding="utf-8"))
    assert saved["id_ls"] == ["q7", "q3", 11] and saved["em"] == [1.0, 0.0, 1.0]
    assert saved["num_NoAns"] == 1 and saved["avg_em_HasAns"] == 0.5
    assert json.loads((tmp_path / "default.json").read_text(encoding="utf-8"))["id_ls"] == [0, 1, 2]
    assert "id_ls" not in named.structured_content["eval_res"]  # UltraRAG's eval_res shape is kept
    assert short.is_error and "id_ls has 1 ids but pred_ls has 3" in short.content[0].text


@pytest.mark.anyio
async def test_evaluate_defaults_come_from_parameter_yaml(tmp_path) -> None:
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool(
            "evaluate", {"pred_ls": ["Paris"], "gt_ls": [["paris"]], "save_path": str(tmp_path)}
        )
    assert not result.is_error
    settings = load_parameter_file(ROOT / "servers" / "evaluation" / "parameter.yaml")
    assert result.structured_content["settings"]["metrics"] == settings["metrics"]
    assert result.structured_content["eval_res"]["avg_em"] == 1.0


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"pred_ls": ["a", "b"], "gt_ls": [["a"]]}, "equal length"),
        ({"pred_ls": [], "gt_ls": []}, "empty"),
        ({"pred_ls": ["a", 3], "gt_ls": [["a"], ["b"]]}, "pred_ls"),
        ({"pred_ls": ["a"], "gt_ls": [[3]]}, "gt_ls"),
        ({"pred_ls": ["a"], "gt_ls": [["a"]], "metrics": ["bleurt"]}, "unknown metric"),
    ],
)
async def test_bad_input_is_a_tool_error(tmp_path, arguments: dict, message: str) -> None:
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("evaluate", {**arguments, "save_path": str(tmp_path)})
    assert result.is_error
    assert message in result.content[0].text
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.anyio
async def test_evaluate_mtrag_lexical_metrics_through_the_server(tmp_path) -> None:
    records = load(SAMPLE)
    arguments = {
        "pred_ls": [r["prediction"] for r in records],
        "gt_ls": [r["target"] for r in records],
        "ctx_ls": [r["contexts"] for r in records],
        "mtrag_metrics": ["Recall", "RougeL_stemFalse", "Extractiveness_RougeL", "Length"],
        "save_path": str(tmp_path / "mtrag.json"),
    }
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool("evaluate_mtrag", arguments)
    assert not result.is_error, result.content[0].text
    eval_res = result.structured_content["eval_res"]
    stored = [r["expected"]["RougeL_stemFalse"] for r in records]
    assert eval_res["RougeL_stemFalse"] == pytest.approx(stored, abs=1e-12, rel=0)
    assert result.structured_content["result_path"] == str(tmp_path / "mtrag.json")
    saved = json.loads((tmp_path / "mtrag.json").read_text(encoding="utf-8"))
    assert saved["avg_Length"] == eval_res["avg_Length"]
    assert saved["settings"]["idk_conditioning"] is False


@pytest.mark.anyio
async def test_evaluate_mtrag_rejects_half_of_the_idk_inputs(tmp_path) -> None:
    async with Client(SPEC.create_app()) as client:
        result = await client.call_tool(
            "evaluate_mtrag",
            {"pred_ls": ["a"], "gt_ls": ["a"], "idk_ls": [1], "mtrag_metrics": ["Recall"], "save_path": str(tmp_path)},
        )
    assert result.is_error and "answerability_ls" in result.content[0].text
