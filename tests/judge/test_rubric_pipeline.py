"""rubric_judge in a pipeline: `ultra run` against the stub, its metrics in the terminal summary and in the report."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import ROOT, run_ultra
from tests.judge.conftest import SECRET, llm_settings
from tests.judge.test_rubric_judge import responder
from tests.report.helpers import build, summary_rows
from tests.support.openai_stub import OpenAIStub
from tests.support.summary_check import check_summary, run_folder

ROWS = [("1", "hi", "score=5"), ("2", "help", "score=2"), ("3", "why", "score=4")]


def test_rubric_metrics_in_the_summary_and_the_report(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps({"id": i, "question": q, "answer": a}) + "\n" for i, q, a in ROWS), "utf-8")
    pipeline = tmp_path / "rubric.yaml"
    pipeline.write_text(
        "servers:\n  benchmark: servers/benchmark\n  judge: servers/judge\n"
        "pipeline:\n  - benchmark.get_data\n  - judge.rubric_judge\n",
        encoding="utf-8",
    )
    rubrics = tmp_path / "rubrics.yaml"
    rubrics.write_text(
        "- name: polite\n  criteria: Is the answer polite?\n  steps: [Read it.]\n  scale: [1, 5]\n"
        "  inputs: [question, answer]\n",
        encoding="utf-8",
    )
    with OpenAIStub(responder=responder) as stub:
        judge_llm = {**llm_settings(stub), "api_key": "${OPENAI_API_KEY}"}
        params = tmp_path / "parameters" / "rubric_parameter.yaml"
        params.parent.mkdir()
        params.write_text(
            json.dumps({
                "benchmark": {"benchmark": {"path": str(data), "key_map": {"q_ls": "question", "pred_ls": "answer",
                                                                           "id_ls": "id"}}},
                "judge": {"judge_llm": judge_llm, "rubrics_path": str(rubrics), "judge_cache": "",
                          "save_path": str(tmp_path / "judge"), "rubric_top_logprobs": 0},
            }),  # JSON is YAML
            encoding="utf-8",
        )  # fmt: skip
        runs = str(tmp_path / "runs")
        done = run_ultra("run", str(pipeline), "--output-dir", runs, cwd=ROOT, env={"OPENAI_API_KEY": SECRET})
        assert done.returncode == 0, done.stderr[-3000:]
        assert stub.request_count == 3
    mean = (5 + 2 + 4) / 3
    assert re.search(rf"^aggregate\s+polite\s+{mean:.4f}\s*$", done.stdout, re.M), done.stdout
    assert re.search(r"^\s+num_polite\s+3\s*$", done.stdout, re.M)
    check_summary(done, ROOT)
    memory = json.loads((run_folder(done, ROOT) / "memory.json").read_text(encoding="utf-8"))
    (result,) = (tmp_path / "judge").glob("rubric_judge_*.json")
    assert memory["aggregate"]["polite"] == mean
    files = build([result], tmp_path / "report", labels={"rubrics": str(result)})
    row = summary_rows(files)[("rubrics", "polite")]
    assert float(row["mean"]) == mean and int(row["n"]) == 3
    assert "polite" in files.report_path.read_text(encoding="utf-8")
