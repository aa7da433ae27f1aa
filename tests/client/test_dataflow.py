"""The static dataflow check and the settings a pipeline uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from ultra_client.calls.server_info import ToolInfo
from ultra_client.errors import UltraError
from ultra_client.pipeline.dataflow import check_dataflow, settings_used
from ultra_client.pipeline.model import load_pipeline


def tool(
    name: str, variables: list[str], outputs: list[str], settings: dict | None = None, optional: tuple = ()
) -> ToolInfo:
    settings = settings or {}
    parameters = variables + list(settings)
    return ToolInfo(name, "", parameters, set(variables) - set(optional), outputs, settings)


TOOLS = {
    "bench": {"get_data": tool("get_data", [], ["q_ls", "gt_ls"], {"benchmark": {"path": "x"}})},
    "gen": {
        "generate": tool("generate", ["q_ls"], ["ans_ls"], {"model": "m", "temperature": 0.0}),
        "route": tool("route", ["ans_ls"], ["route"]),
        "refine": tool("refine", ["ans_ls", "hint"], ["ans_ls"], optional=("hint",)),
    },
    "ev": {"evaluate": tool("evaluate", ["pred_ls", "gt_ls"], ["eval_res"], {"metrics": ["em"]})},
}


def check(tmp_path: Path, steps: str):
    path = tmp_path / "p.yaml"
    path.write_text("servers:\n  bench: b\n  gen: g\n  ev: e\npipeline:\n" + steps, encoding="utf-8")
    pipeline = load_pipeline(path)
    return pipeline, check_dataflow(pipeline, TOOLS)


def test_renames_make_the_flow_valid(tmp_path: Path) -> None:
    _, known = check(
        tmp_path,
        "  - bench.get_data\n  - gen.generate\n  - ev.evaluate:\n"
        "      input: {pred_ls: ans_ls}\n      output: {eval_res: scores}\n",
    )
    assert known == {"q_ls", "gt_ls", "ans_ls", "scores"}


def test_variable_used_before_produced(tmp_path: Path) -> None:
    with pytest.raises(
        UltraError,
        match=r"p\.yaml:6: 'gen\.generate' needs variable 'q_ls', which no earlier step produces; available: none yet",
    ):
        check(tmp_path, "  - gen.generate\n  - bench.get_data\n")


def test_renamed_variable_missing_mentions_rename(tmp_path: Path) -> None:
    with pytest.raises(UltraError, match=r"needs variable 'answers' \(renamed from 'pred_ls'\)"):
        check(tmp_path, "  - bench.get_data\n  - ev.evaluate:\n      input: {pred_ls: answers}\n")


def test_unknown_tool_lists_the_servers_tools(tmp_path: Path) -> None:
    with pytest.raises(
        UltraError, match=r"p\.yaml:7: server 'gen' has no tool 'generat'; its tools: \['generate', 'refine', 'route'\]"
    ):
        check(tmp_path, "  - bench.get_data\n  - gen.generat\n")


def test_bad_input_rename(tmp_path: Path) -> None:
    with pytest.raises(UltraError, match=r"input rename: 'ev\.evaluate' has no parameter 'preds'"):
        check(tmp_path, "  - bench.get_data\n  - ev.evaluate:\n      input: {preds: q_ls}\n")


def test_bad_output_rename(tmp_path: Path) -> None:
    with pytest.raises(UltraError, match=r"output rename: 'gen\.generate' has no output 'answer'"):
        check(tmp_path, "  - bench.get_data\n  - gen.generate:\n      output: {answer: a}\n")


def test_renaming_a_setting_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UltraError, match="'model' of 'gen.generate' is a setting"):
        check(tmp_path, "  - bench.get_data\n  - gen.generate:\n      input: {model: q_ls}\n")


def test_optional_variables_are_not_required(tmp_path: Path) -> None:
    _, known = check(tmp_path, "  - bench.get_data\n  - gen.generate\n  - gen.refine\n")
    assert "ans_ls" in known


def test_loop_body_is_checked(tmp_path: Path) -> None:
    with pytest.raises(UltraError, match="needs variable 'q_ls'"):
        check(tmp_path, "  - loop:\n      times: 2\n      steps: [gen.generate]\n")


def test_branch_needs_a_route_and_keeps_only_common_outputs(tmp_path: Path) -> None:
    with pytest.raises(UltraError, match="the branch router must produce a 'route' variable"):
        check(
            tmp_path,
            "  - bench.get_data\n  - branch:\n      router: [gen.generate]\n      branches: {a: [gen.generate]}\n",
        )
    steps = (
        "  - bench.get_data\n  - gen.generate\n  - branch:\n      router: [gen.route]\n"
        "      branches:\n        done: [gen.refine]\n        more: [ev.evaluate: {input: {pred_ls: ans_ls}}]\n"
    )
    _, known = check(tmp_path, steps)
    assert "eval_res" not in known  # produced in one branch only
    with pytest.raises(UltraError, match="needs variable 'eval_res'"):
        tools = dict(TOOLS, ev={**TOOLS["ev"], "report": tool("report", ["eval_res"], [])})
        path = tmp_path / "p.yaml"
        path.write_text(
            "servers:\n  bench: b\n  gen: g\n  ev: e\npipeline:\n" + steps + "  - ev.report\n", encoding="utf-8"
        )
        check_dataflow(load_pipeline(path), tools)


def test_settings_used_holds_only_the_pipelines_tools(tmp_path: Path) -> None:
    pipeline, _ = check(tmp_path, "  - bench.get_data\n  - gen.generate\n")
    assert settings_used(pipeline, TOOLS) == {
        "bench": {"benchmark": {"path": "x"}},
        "gen": {"model": "m", "temperature": 0.0},
    }
