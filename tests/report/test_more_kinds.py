"""consistency and mtrag_evaluated_records, written by their tools, read by the report: the per-query values on
the page are those in the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.report.helpers import build, summary_rows
from ultra_kit.inprocess import local_tools


def _tool(name: str):
    from servers.evaluation.server import SPEC

    return local_tools(SPEC)[name]


def test_consistency_file(tmp_path: Path) -> None:
    tool = _tool("consistency")
    runs = [["the cat sat", "blue sky today"], ["the cat sat down", "grey sky"], ["a cat sat", "blue sky"]]
    given = {"answer_runs": runs, "id_ls": ["q1", "q2"], "save_path": str(tmp_path / "results")}
    result = tool.function(**{**tool.settings, **given})
    document = json.loads(Path(result["result_path"]).read_text(encoding="utf-8"))
    files = build([result["result_path"]], tmp_path / "out")
    rows = summary_rows(files)
    (run,) = files.runs
    means = [query["means"] for query in document["answers"]["per_query"]]
    for name in means[0]:
        expected = [m[name] for m in means if m[name] is not None]
        assert float(rows[(run, name)]["mean"]) == pytest.approx(sum(expected) / len(expected), rel=1e-12)
        assert int(rows[(run, name)]["n"]) == len(expected)


def test_mtrag_evaluated_records(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    source = tmp_path / "tasks.jsonl"
    tasks = [{"task_id": "a", "answerability": ["ANSWERABLE"]}, {"task_id": "b", "answerability": ["UNANSWERABLE"]}]
    source.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    items = [
        {"id": "a", "status": "ok", "idk": 0.0, "faithfulness": 0.5, "rag_score": 0.7},
        {"id": "b", "status": "ok", "idk": 1.0, "faithfulness": 1.0, "rag_score": 0.2},
    ]
    tool = _tool("mtrag_evaluated_records")
    result = tool.function(
        id_ls=["a", "b"], answerability_ls=["ANSWERABLE", "UNANSWERABLE"], algorithmic_res={"RB_agg": [0.5, 0.25]},
        idk_items=items, faithfulness_items=items, rag_items=items, data_info={"path": str(source)},
        save_path=str(tmp_path / "out"),
    )  # fmt: skip
    records = [json.loads(line) for line in Path(result["result_path"]).read_text().splitlines()]
    files = build([result["summary_path"]], tmp_path / "report")
    rows = summary_rows(files)
    (run,) = files.runs
    for name in ("RL_F", "RB_llm_idk", "idk_eval"):
        values = [r["metrics"][name][0] for r in records]
        assert float(rows[(run, name)]["mean"]) == pytest.approx(sum(values) / len(values), rel=1e-12)
