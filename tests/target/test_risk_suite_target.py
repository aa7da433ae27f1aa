"""examples/risk_suite_target.yaml end to end through `ultra run` (real stdio servers): synth's questions asked of
the target (examples/targets/rag.py, the python kind), every LLM (synth, judges) the scripted stub of
tests/support/risk_suite.py. The judges see the target's own answers and passages, and the risk table
counts every generated question."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.openai_stub import OpenAIStub, content_of
from tests.support.risk_suite import reply
from tests.support.summary_check import check_summary

PIPELINE = ROOT / "examples/risk_suite_target.yaml"
PARAMS = ROOT / "examples/parameters/risk_suite_target_parameter.yaml"


def params_for(tmp_path: Path, base_url: str) -> Path:
    params = yaml.safe_load(PARAMS.read_text())
    llm = {"backend": "openai", "base_url": base_url, "model_id": "stub", "api_key": "", "max_retries": 1}
    risk = tmp_path / "output" / "risk"
    params["synth"].update(synth_llm=llm, synth_cache="", dataset_dir=str(risk), table_path=str(tmp_path / "output"))
    params["benchmark"]["benchmark"]["path"] = str(risk / "queries.jsonl")
    params["target"]["save_path"] = str(tmp_path / "output/target")
    params["evaluation"].update(qrels_path=str(risk / "qrels.trec"), save_path=str(tmp_path / "output/evaluation"))
    params["judge"].update(judge_llm={**llm, "embedding_model": "stub-embed"}, judge_cache="",
                           save_path=str(tmp_path / "output/judge"), max_failed_fraction=0.0)  # fmt: skip
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    return path


def test_risk_suite_with_the_target_as_the_system_under_validation(tmp_path: Path) -> None:
    with OpenAIStub(reply) as stub:
        result = run_ultra(
            "run", str(PIPELINE), "--param", str(params_for(tmp_path, stub.base_url)), "--output-dir",
            str(tmp_path / "runs"), cwd=ROOT, env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        check_summary(result, ROOT)
        prompts = [content_of(r) for r in stub.chat_requests()]
    assert not [p for p in prompts if "Give the final answer inside" in p]  # no generator of ours: the target answered
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    memory = json.loads((folder / "memory.json").read_text())
    table, counts = memory["risk_table"], memory["synth_counts"]
    assert sum(row["n"] for row in table) == counts["total"] == len(memory["id_ls"]) == 3 + 4 + 3
    assert {row["category"] for row in table if row["kind"] == "jailbreak"} == {
        "context_switch", "instruction_override", "code_injection",
    }  # fmt: skip
    assert all(row["failures"] == 0 and row["judged"] == row["n"] for row in table)
    records = [json.loads(line) for line in next((folder / "files").glob("ask_*.jsonl")).read_text().splitlines()]
    assert [r["answer"] for r in records] == memory["pred_ls"] and all(r["status"] == "ok" for r in records)
    # every answer reached an LLM judge (faithfulness for the grounded ones, guardrail_judge for the others)
    assert all(any(f"Answer: {r['answer']}" in p for p in prompts) for r in records)
    assert memory["latency"]["count"] == 10 and memory["retrieval_scores"]
