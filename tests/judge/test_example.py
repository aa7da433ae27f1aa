"""examples/umbrela.yaml end to end with `ultra run`, its judge pointed at the local stub server."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, SAMPLE, SECRET, llm_settings, oracle
from tests.judge.test_umbrela import sample_grades
from tests.support.openai_stub import OpenAIStub
from tests.support.summary_check import check_summary


def test_umbrela_example_runs(tmp_path: Path) -> None:
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "umbrela_parameter.yaml").read_text())
    with OpenAIStub(responder=oracle(sample_grades(), default=1)) as stub:
        params["judge"].update(
            judge_llm={**llm_settings(stub), "api_key": "${OPENAI_API_KEY}"},
            judge_cache=str(tmp_path / "cache.sqlite"),
            save_path=str(tmp_path / "judge"),
        )
        params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
        param_file = tmp_path / "umbrela_parameter.yaml"
        param_file.write_text(yaml.safe_dump(params))
        done = run_ultra(
            "run", "examples/umbrela.yaml", "--param", str(param_file), cwd=ROOT, env={"OPENAI_API_KEY": SECRET}
        )
        assert done.returncode == 0, done.stderr[-3000:]
        check_summary(done, ROOT)
        assert stub.request_count == 171  # 180 pairs, 9 repeated passage texts
    results = sorted((tmp_path / "judge").glob("judge_agreement_*.json"))
    report = json.loads(results[-1].read_text())
    # The oracle answers with the human grade, so every shared pair agrees.
    assert report["kappa_graded"] == 1.0 and report["num_pairs"] > 0
    assert [r["name"] for r in report["ranking"]["runs"]] == ["run.bm25.trec", "run.tfidf.trec", "run.title.trec"]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in done.stdout + done.stderr
    assert SAMPLE.exists()
