"""The issue's case: examples/nuggets.yaml against an endpoint whose replies are unreadable, then against a
working one with the same model_id and the same answer cache. The working endpoint gets the requests."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, SECRET, llm_settings, oracle
from tests.judge.test_nuggets_example import responder
from tests.judge.test_umbrela import sample_grades
from tests.support.openai_stub import OpenAIStub
from tests.support.summary_check import check_summary


def run_nuggets(stub: OpenAIStub, tmp_path: Path):
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "nuggets_parameter.yaml").read_text())
    params["judge"].update(
        judge_llm={**llm_settings(stub, max_retries=1), "api_key": "${OPENAI_API_KEY}"},
        judge_cache=str(tmp_path / "cache.sqlite"),  # the same cache for both endpoints
        save_path=str(tmp_path / "judge"),
    )
    param_file = tmp_path / "nuggets_parameter.yaml"
    param_file.write_text(yaml.safe_dump(params))
    return run_ultra(
        "run", "examples/nuggets.yaml", "--param", str(param_file), cwd=ROOT, env={"OPENAI_API_KEY": SECRET}
    )


def test_nuggets_after_an_unreadable_endpoint_runs_at_a_working_one(tmp_path: Path) -> None:
    with OpenAIStub(lambda request: "Sorry, I can't help with that.") as bad:
        failed = run_nuggets(bad, tmp_path)
        assert bad.request_count > 0
    assert failed.returncode != 0 and "parse_error" in failed.stderr, failed.stderr[-2000:]
    with OpenAIStub(responder=responder(oracle(sample_grades(), default=1))) as good:  # model_id: stub-judge too
        done = run_nuggets(good, tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        assert good.request_count > 0
    check_summary(done, ROOT)
