"""The step protocol: empty branch lists (UltraRAG's ``stop: []``), and outputs learned from get_data's key_map."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.client.conftest import write_pipeline
from tests.conftest import ROOT, run_ultra
from ultra_client.calls.server_info import ToolInfo
from ultra_client.errors import UltraError
from ultra_client.pipeline.dataflow import check_dataflow
from ultra_client.pipeline.model import load_pipeline

STOP = """\
  - toy.make_items
  - branch:
      router: [toy.route_all]
      branches:
        upper: [toy.upper]
        stop: []
  - branch:
      router: [toy.route_each]
      branches:
        short: []
        long: [toy.append_mark]
"""


@pytest.mark.parametrize(("target", "items"), [("stop", ["a", "bbbb!"]), ("upper", ["A", "BBBB!"])])
def test_an_empty_branch_runs_nothing(toy_project: Path, ultra, target: str, items: list[str]) -> None:
    pipeline = write_pipeline(toy_project, "stop", STOP)
    params = pipeline.parent / "parameters" / "stop_parameter.yaml"
    params.parent.mkdir()
    params.write_text(yaml.safe_dump({"toy": {"words": "a bbbb", "mark": "!", "target": target}}))
    result = ultra("run", str(pipeline), cwd=toy_project)
    assert result.returncode == 0, result.stderr
    (folder,) = [p for p in (toy_project / "output").iterdir() if p.is_dir()]  # not the run index
    memory = json.loads((folder / "memory.json").read_text())
    # route_all: 'stop' runs nothing, 'upper' upper-cases; per item: 'a' is short (nothing), the long one gets '!'
    assert memory["items"] == items


def test_an_empty_branch_keeps_what_is_known(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "servers:\n  bench: b\n  gen: g\npipeline:\n  - bench.get_data\n  - branch:\n      router: [gen.route]\n"
        "      branches:\n        stop: []\n        go: [gen.generate]\n",
        encoding="utf-8",
    )
    route = ToolInfo("route", "", ["q_ls"], {"q_ls"}, ["route"], {})
    generate = ToolInfo("generate", "", ["q_ls"], {"q_ls"}, ["ans_ls"], {})
    tools = {"bench": {"get_data": GET_DATA}, "gen": {"route": route, "generate": generate}}
    # ans_ls is not known after the branch: the empty one does not produce it
    known = check_dataflow(load_pipeline(path), tools, {"bench": {}})
    assert known == {"q_ls", "gt_ls", "id_ls", "data_info", "route"}


GET_DATA = ToolInfo(
    "get_data",
    "",
    ["benchmark"],
    set(),
    ["q_ls", "gt_ls", "pred_ls", "id_ls", "data_info"],
    {"benchmark": {"path": "x", "key_map": {"q_ls": "question", "gt_ls": "answers", "id_ls": "id"}}},
    required_outputs={"data_info"},
    outputs_from="benchmark.key_map",
)
EVALUATE = ToolInfo("evaluate", "", ["pred_ls", "gt_ls"], {"pred_ls", "gt_ls"}, ["eval_res"], {})


def key_map_pipeline(tmp_path: Path, rename: str = "") -> Path:
    path = tmp_path / "p.yaml"
    step = f"  - ev.evaluate:\n      input: {rename}\n" if rename else "  - ev.evaluate\n"
    path.write_text(f"servers:\n  bench: b\n  ev: e\npipeline:\n  - bench.get_data\n{step}", encoding="utf-8")
    return path


def test_get_data_outputs_follow_the_key_map_of_the_parameter_file(tmp_path: Path) -> None:
    tools = {"bench": {"get_data": GET_DATA}, "ev": {"evaluate": EVALUATE}}
    pipeline = load_pipeline(key_map_pipeline(tmp_path, "{pred_ls: choices_ls}"))
    settings = {"bench": {"benchmark": {"key_map": {"choices_ls": "choices", "gt_ls": "answers"}}}}
    assert check_dataflow(pipeline, tools, settings) == {"choices_ls", "gt_ls", "data_info", "eval_res"}
    with pytest.raises(UltraError, match=r"needs variable 'choices_ls' \(renamed from 'pred_ls'\)"):
        check_dataflow(pipeline, tools)  # the default key_map has no choices_ls
    # a parameter file whose key_map has no pred_ls: caught before anything runs, not after loading the data
    with pytest.raises(UltraError, match=r"'ev.evaluate' needs variable 'pred_ls'.*available: \['data_info', 'gt_ls'"):
        check_dataflow(load_pipeline(key_map_pipeline(tmp_path)), tools, {"bench": {"benchmark": {"path": "y"}}})
    # before there is a parameter file (the first build) every output get_data may produce counts
    assert "pred_ls" in check_dataflow(load_pipeline(key_map_pipeline(tmp_path)), tools)
    # a partial benchmark mapping keeps the default key_map
    known = check_dataflow(load_pipeline(key_map_pipeline(tmp_path, "{pred_ls: q_ls}")), tools, {"bench": {}})
    assert known == {"q_ls", "gt_ls", "id_ls", "data_info", "eval_res"}


def test_run_with_a_key_map_variable_of_any_name(tmp_path: Path) -> None:
    pipeline = tmp_path / "choices.yaml"
    pipeline.write_text(
        "servers:\n  benchmark: servers/benchmark\n  evaluation: servers/evaluation\npipeline:\n"
        "  - benchmark.get_data\n  - evaluation.evaluate:\n      input: {pred_ls: choices_ls}\n",
        encoding="utf-8",
    )
    params = {
        "benchmark": {
            "benchmark": {
                "path": str(ROOT / "data/sample_qa.jsonl"),
                "key_map": {"gt_ls": "golden_answers", "choices_ls": "question"},
                "limit": 3,
            }
        },
        "evaluation": {"metrics": ["em"], "save_path": str(tmp_path / "evaluation")},
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    done = run_ultra("run", str(pipeline), "--param", "params.yaml", "--output-dir", "runs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]  # not the run index
    memory = json.loads((folder / "memory.json").read_text())
    rows = [json.loads(line) for line in (ROOT / "data/sample_qa.jsonl").read_text().splitlines()][:3]
    assert memory["choices_ls"] == [row["question"] for row in rows]
    assert memory["eval_res"]["avg_em"] == 0.0  # a question is never its own answer
