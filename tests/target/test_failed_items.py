"""A failed item through a whole pipeline (``ultra run``, real server subprocesses): target.ask over a python
function that fails on some questions, a judge on the local OpenAI stub, then evaluate. The failed items are
never scored and are counted at every step; the others keep their own ids and the values the target returned."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.openai_stub import OpenAIStub, content_of

SYSTEM = """
def answer(item):
    question = item["question"]
    if question.startswith("broken"):
        raise RuntimeError("the index has no shard for " + question)
    return {"answer": "A:" + question, "contexts": [{"text": "about " + question, "id": "d-" + item["id"]}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 2}}
"""
QUESTIONS = [("q1", "alpha"), ("q2", "broken beta"), ("q3", "gamma"), ("q4", "broken delta"), ("q5", "epsilon")]
GOLD = {"q1": "A:alpha", "q3": "something else", "q5": "A:epsilon"}
PIPELINE = """servers:
  benchmark: {root}/servers/benchmark
  target: {root}/servers/target
  judge: {root}/servers/judge
  evaluation: {root}/servers/evaluation
pipeline:
  - benchmark.get_data
  - target.ask
  - judge.idk_judge
  - evaluation.evaluate
"""


def test_failed_items_are_skipped_and_counted_downstream_and_the_others_keep_their_values(tmp_path: Path) -> None:
    (tmp_path / "flaky.py").write_text(SYSTEM)
    rows = [{"id": i, "question": q, "golden_answers": [GOLD.get(i, "none")]} for i, q in QUESTIONS]
    (tmp_path / "questions.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "p.yaml").write_text(PIPELINE.format(root=ROOT))
    benchmark = yaml.safe_load((ROOT / "examples/parameters/eval_target_python_parameter.yaml").read_text())
    with OpenAIStub(lambda request: '{"attempted": "yes", "idk": "no"}') as stub:
        parameters = {
            "benchmark": {"benchmark": {**benchmark["benchmark"]["benchmark"], "path": "questions.jsonl"}},
            "target": {"target": {"kind": "python", "function": "flaky.py:answer", "max_failed_fraction": 0.5,
                                  "max_retries": 0}, "save_path": "output/target"},
            "judge": {"judge_llm": {"backend": "openai", "base_url": stub.base_url, "model_id": "gpt-4o-mini",
                                    "api_key": ""}, "save_path": "output/judge", "judge_cache": ""},
            "evaluation": {"metrics": ["em"], "save_path": "output/evaluation"},
        }  # fmt: skip
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(parameters))
        done = run_ultra("run", "p.yaml", "--param", "params.yaml", cwd=tmp_path, timeout=300)
        judged_texts = [content_of(request) for request in stub.chat_requests()]
    assert done.returncode == 0, done.stdout + done.stderr
    (folder,) = [p for p in (tmp_path / "output").iterdir() if p.is_dir() and p.name.startswith("p_")]
    memory = json.loads((folder / "memory.json").read_text())
    assert memory["pred_ls"] == ["A:alpha", None, "A:gamma", None, "A:epsilon"]
    assert memory["answered_id_ls"] == ["q1", "q3", "q5"]
    assert memory["target_info"]["items"] == 5 and memory["target_info"]["answered"] == 3

    # the judge: no request for a failed item, each request carries its own question's answer
    assert len(judged_texts) == 3
    for question in ("alpha", "gamma", "epsilon"):
        (text,) = [t for t in judged_texts if f"Question: {question}\n" in t]
        assert f"Answer: A:{question}\n" in text
    judge = json.loads(Path(next(folder.rglob("idk_judge_*.json"))).read_text())
    assert {item["id"]: item["status"] for item in judge["items"]} == {
        "q1": "ok", "q2": "unanswered", "q3": "ok", "q4": "unanswered", "q5": "ok"}  # fmt: skip
    assert judge["counts"] == {"items": 5, "ok": 3, "unanswered": 2}
    assert judge["failed"]["count"] == 0 and judge["failed"]["total"] == 3  # the judge's own failures only
    assert judge["aggregate"]["num_idk"] == 3 and judge["aggregate"]["num_excluded"] == 2
    assert all(item["requests"] == 0 for item in judge["items"] if item["status"] == "unanswered")

    # evaluate: the failed ids listed, the others scored against their own golds
    scores = json.loads(Path(next(folder.rglob("evaluate_*.json"))).read_text())
    assert scores["id_ls"] == ["q1", "q3", "q5"] and scores["em"] == [1.0, 0.0, 1.0]
    assert scores["settings"]["failed_items"] == ["q2", "q4"] and scores["settings"]["n_items"] == 3

    # the cost table: the target's row with its requests and reported tokens, cost unknown, out of the total
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line.split()[:1]}
    assert rows["target.ask"][1:] == ["target:python", "5", "0", "21", "6", "unknown"]
    assert rows["judge.idk_judge"][2] == "3" and rows["total"][1] == "3" and rows["total"][-1].startswith("$")
    assert "target.ask: the system under test, not priced and not in the total" in done.stdout
    usage = json.loads((folder / "usage.json").read_text())
    assert usage["total"]["cost_usd"] == usage["steps"][1]["cost_usd"] > 0 and usage["steps"][0]["cost_usd"] is None
    reasons = {json.loads(line)["id"]: json.loads(line)["reason"] for line in next(folder.rglob("ask_*.jsonl")).open()}
    assert reasons == {"q1": None, "q2": "target_error", "q3": None, "q4": "target_error", "q5": None}
