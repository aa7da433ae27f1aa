"""examples/fill_qrels.yaml end to end with `ultra run`, its judge pointed at the local stub with scripted grades."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, SECRET, llm_settings
from tests.support.openai_stub import OpenAIStub, hashed_grade
from tests.support.summary_check import check_summary


def test_fill_qrels_example_runs(tmp_path: Path) -> None:
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "fill_qrels_parameter.yaml").read_text())
    with OpenAIStub(responder=hashed_grade) as stub:  # a grade 0-3 from a hash of the request: scripted, stable
        params["judge"].update(
            judge_llm={**llm_settings(stub), "api_key": "${OPENAI_API_KEY}"},
            judge_cache=str(tmp_path / "cache.sqlite"),
            save_path=str(tmp_path / "judge"),
            fill_budget=40,
        )
        params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
        param_file = tmp_path / "fill_qrels_parameter.yaml"
        param_file.write_text(yaml.safe_dump(params))
        command = ("run", "examples/fill_qrels.yaml", "--param", str(param_file))
        done = run_ultra(*command, cwd=ROOT, env={"OPENAI_API_KEY": SECRET})
        assert done.returncode == 0, done.stderr[-3000:]
        check_summary(done, ROOT)
        assert 0 < stub.request_count <= 40
        again = run_ultra(*command, cwd=ROOT, env={"OPENAI_API_KEY": SECRET})  # from the cache
        assert again.returncode == 0 and stub.request_count <= 40
    report = json.loads(sorted((tmp_path / "judge").glob("fill_qrels_*.json"))[0].read_text())
    assert report["fill_counts"]["chosen"] == 40 and set(report["per_run"]) == {"run.bm25", "run.tfidf", "run.title"}
    evaluated = json.loads(next((tmp_path / "evaluation").glob("evaluate_trec_*.json")).read_text())
    bm25 = report["per_run"]["run.bm25"]
    assert evaluated["aggregate"]["ndcg@20"] == bm25["ndcg@20"]["after"]  # evaluate_trec read the merged qrels
    assert evaluated["aggregate"]["Judged@20"] == bm25["Judged@20"]["after"]
    assert SECRET not in done.stdout + done.stderr
