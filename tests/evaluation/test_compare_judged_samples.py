"""A judge run with ``judge_llm.samples: 3`` then ``compare_judged`` on its result files: the pipeline, over
real tool calls (judge against the local stub, then the evaluation server), checked against the bootstrap
computed directly from the scripted samples with the same seed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from servers.evaluation.judged.bootstrap import compare_samples
from servers.evaluation.server import SPEC as EVALUATION
from servers.judge.server import SPEC as JUDGE
from tests.conftest import ROOT, run_ultra
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_kit.inprocess import call_local_tool, local_tools

# the grade per (system, item) and seed 42, 43, 44; B's item 4 is never readable (fails, so it is left out)
GRADES = {
    ("A", 1): [5, 4, 5], ("A", 2): [3, 4, 4], ("A", 3): [4, 4, 4], ("A", 4): [2, 3, 5],
    ("B", 1): [3, 4, 2], ("B", 2): [3, 3, 3], ("B", 3): [2, 1, 2],
}  # fmt: skip
POLITE = {"name": "polite", "criteria": "Is the answer polite?", "steps": ["Read it."], "scale": [1, 5],
          "inputs": ["answer"]}  # fmt: skip


def responder(request: dict[str, Any]) -> str:
    system, item = re.search(r"system=(\w) item=(\d)", content_of(request)).groups()
    grades = GRADES.get((system, int(item)))
    if grades is None:
        return "no idea"
    return json.dumps({"reasoning": "r", "score": grades[request["seed"] - 42]})


def call(spec: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    return anyio.run(call_local_tool, local_tools(spec)[tool], arguments)


def judged(stub: OpenAIStub, tmp_path: Path, system: str) -> str:
    llm = {"backend": "openai", "base_url": stub.base_url, "model_id": "stub-judge", "api_key": "",
           "samples": 3, "temperature": 0.7, "max_retries": 0}  # fmt: skip
    result = call(
        JUDGE, "rubric_judge", pred_ls=[f"system={system} item={i}" for i in range(1, 5)], id_ls=["1", "2", "3", "4"],
        rubrics=[POLITE], rubric_top_logprobs=0, judge_llm=llm, judge_cache=str(tmp_path / "cache.sqlite"),
        save_path=str(tmp_path / system), max_failed_fraction=0.5,
    )  # fmt: skip
    return result["result_path"]


def test_samples_of_a_judge_run_feed_compare_judged(tmp_path: Path) -> None:
    with OpenAIStub(responder=responder) as stub:
        files = {system: judged(stub, tmp_path, system) for system in ("A", "B")}
        assert stub.request_count == 4 * 3 * 2
    recorded = json.loads(Path(files["A"]).read_text())["items"][0]
    assert recorded["sample_values"] == {"polite": [5, 4, 5]} and recorded["polite"] == pytest.approx(14 / 3)
    settings = {"n_resamples": 2000, "seed": 7, "alpha": 0.05, "judge_metric": ""}
    one_file = call(EVALUATION, "compare_judged", sample_files=files, save_path=str(tmp_path / "c1.json"), **settings)
    as_lists = call(EVALUATION, "compare_judged", sample_files={s: [f] for s, f in files.items()},
                    save_path=str(tmp_path / "c2.json"), **settings)  # fmt: skip
    as_samples = call(EVALUATION, "compare_judged", samples=files, sample_files={},
                      save_path=str(tmp_path / "c3.json"), **settings)  # fmt: skip
    common = [1, 2, 3]  # B's item 4 failed: left out
    direct = compare_samples(
        [np.array(GRADES[("A", i)], float) for i in common], [np.array(GRADES[("B", i)], float) for i in common],
        n_resamples=2000, seed=7, alpha=0.05,
    )  # fmt: skip
    for result in (one_file, as_lists, as_samples):
        got = result["comparisons"]["A - B"]
        assert got["diff"] == pytest.approx((14 / 3 + 11 / 3 + 4 - 3 - 3 - 5 / 3) / 3)
        assert got["with_judge_noise"] == direct["with_judge_noise"]
        assert got["judge_as_exact"] == direct["judge_as_exact"]
        assert got["n_items"] == 3 and got["samples_per_item"] == [3, 3] and got["items_left_out"] == 1
    # judge noise widens the interval: the hierarchical one holds the naive one's width at least
    noisy, exact = (
        one_file["comparisons"]["A - B"]["with_judge_noise"],
        one_file["comparisons"]["A - B"]["judge_as_exact"],
    )
    assert noisy["ci"][1] - noisy["ci"][0] > exact["ci"][1] - exact["ci"][0]


def test_a_pipeline_judges_with_samples_then_compares(tmp_path: Path) -> None:
    """``ultra run``: get_data (answers of A and B, each with its system) -> rubric_judge with samples: 3 ->
    compare_judged on the judge's items and system_ls."""
    rows = [{"id": str(i), "question": "q", "answer": f"system={s} item={i}", "system": s}
            for s in ("A", "B") for i in range(1, 5)]  # fmt: skip
    data = tmp_path / "answers.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    pipeline = tmp_path / "noisy.yaml"
    pipeline.write_text(
        "servers:\n  benchmark: servers/benchmark\n  judge: servers/judge\n  evaluation: servers/evaluation\n"
        "pipeline:\n  - benchmark.get_data\n  - judge.rubric_judge:\n      output: {items: judged_items}\n"
        "  - evaluation.compare_judged\n",
        encoding="utf-8",
    )
    key_map = {"q_ls": "question", "pred_ls": "answer", "id_ls": "id", "system_ls": "system"}
    with OpenAIStub(responder=responder) as stub:
        llm = {"backend": "openai", "base_url": stub.base_url, "model_id": "stub-judge", "api_key": "",
               "samples": 3, "temperature": 0.7, "max_retries": 0}  # fmt: skip
        params = tmp_path / "parameters" / "noisy_parameter.yaml"
        params.parent.mkdir()
        params.write_text(json.dumps({
            "benchmark": {"benchmark": {"path": str(data), "key_map": key_map}},
            "judge": {"judge_llm": llm, "rubrics": [POLITE], "judge_cache": "", "save_path": str(tmp_path / "judge"),
                      "rubric_top_logprobs": 0, "max_failed_fraction": 0.5},
            "evaluation": {"n_resamples": 2000, "seed": 7, "judge_metric": "polite",
                           "save_path": str(tmp_path / "compare.json")},
        }), encoding="utf-8")  # fmt: skip
        done = run_ultra("run", str(pipeline), "--output-dir", str(tmp_path / "runs"), cwd=ROOT)
        assert done.returncode == 0, done.stderr[-3000:]
        assert stub.request_count == 8 * 3
    got = json.loads((tmp_path / "compare.json").read_text(encoding="utf-8"))["comparisons"]["A - B"]
    common = [1, 2, 3]
    direct = compare_samples(
        [np.array(GRADES[("A", i)], float) for i in common], [np.array(GRADES[("B", i)], float) for i in common],
        n_resamples=2000, seed=7, alpha=0.05,
    )  # fmt: skip
    assert got["with_judge_noise"] == direct["with_judge_noise"] and got["judge_as_exact"] == direct["judge_as_exact"]
    assert got["n_items"] == 3 and got["samples_per_item"] == [3, 3]
