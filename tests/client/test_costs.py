"""Cost at the end of ``ultra run``: an unknown model, a user price file, a broken one, tokens and cost per step
from a judge run on the local test server, a second run answered by the cache, and a model with no price.
The price table itself: tests/llm/test_prices.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.openai_stub import _WORD, OpenAIStub, content_of, hashed_grade
from tests.support.together import at_once
from tests.support.traces_project import traces_example_project
from ultra_client.summary.costs import cost_lines, finish_run, priced, step_record, step_records
from ultra_llm.prices import PRICES_ENV

JUDGE_LLM = {"backend": "openai", "base_url": "http://x/v1", "model_id": "gpt-4o-mini", "timeout": 5}
USAGE = {"requests": 10, "cache_hits": 2, "prompt_tokens": 3_000_000, "completion_tokens": 500_000}


def test_an_unknown_model_shows_its_tokens_and_cost_unknown_never_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    known = step_record("judge.a", {"judge_llm": JUDGE_LLM}, {"usage": USAGE, "aggregate": {}})
    unknown = step_record("judge.b", {"judge_llm": {**JUDGE_LLM, "model_id": "my-own-llm"}}, {"usage": USAGE})
    usage = priced([known, unknown])
    # 3M in at $0.15 and 0.5M out at $0.60 per million: 0.45 + 0.30
    assert usage["steps"][0]["cost_usd"] == pytest.approx(0.75) and usage["steps"][1]["cost_usd"] is None
    assert usage["total"]["cost_usd"] is None and usage["total"]["known_cost_usd"] == pytest.approx(0.75)
    lines = cost_lines(usage)
    row = next(line for line in lines if line.startswith("judge.b"))
    assert row.split() == ["judge.b", "my-own-llm", "10", "2", "3000000", "500000", "unknown"]
    total = next(line for line in lines if line.startswith("total"))
    assert total.split() == ["total", "20", "4", "6000000", "1000000", "unknown"]
    assert "no price for my-own-llm: the known part is $0.7500" in lines[-1]
    # no usage among the outputs (a classifier, a retriever): not an LLM step
    assert step_record("evaluation.evaluate_trec", {}, {"eval_res": {"map": 0.3}}) is None
    # the usage inside an output mapping (generation's generate_info), a local model: free
    local = step_record(
        "generation.generate", {"llm": {"backend": "local", "model_id": "m"}}, {"info": {"usage": USAGE}}
    )
    assert local["model"] == "local:m" and local["prompt_tokens"] == 3_000_000
    assert priced([local])["total"]["cost_usd"] == 0.0
    # two LLM settings in one step: which tokens went to which model is not known, so no price
    both = step_record("judge.c", {"a_llm": JUDGE_LLM, "b_llm": {**JUDGE_LLM, "model_id": "gpt-4o"}}, {"usage": USAGE})
    assert both["model"] == "gpt-4o-mini, gpt-4o" and priced([both])["total"]["cost_usd"] is None


def test_prices_of_a_user_file_are_named_over_the_shipped_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    shipped = yaml.safe_load((ROOT / "ultra_llm" / "prices.yaml").read_text())
    record = step_record("judge.a", {"judge_llm": JUDGE_LLM}, {"usage": USAGE})
    assert priced([record])["prices"] == f"prices.yaml of {shipped['date']}"
    mine = tmp_path / "mine.yaml"
    mine.write_text("date: 2026-11-01\nmodels:\n  gpt-4o-mini: {input: 1, output: 2}\n")
    monkeypatch.setenv(PRICES_ENV, str(mine))
    usage = priced([record])
    assert usage["prices"] == f"mine.yaml of 2026-11-01 over prices.yaml of {shipped['date']}"
    assert usage["total"]["cost_usd"] == pytest.approx(3 + 1)  # 3M in at $1, 0.5M out at $2


def test_a_broken_price_file_leaves_the_cost_unknown_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PRICES_ENV, str(tmp_path / "missing.yaml"))
    record = step_record("judge.a", {"judge_llm": JUDGE_LLM}, {"usage": USAGE})
    local = step_record("generation.generate", {"llm": {"backend": "local", "model_id": "m"}}, {"usage": USAGE})
    folder = tmp_path / "run"
    folder.mkdir()
    lines = finish_run(folder, [record, local])  # no exception: a run is never failed by its price file
    assert lines[-2].startswith(
        f"prices not read: {tmp_path / 'missing.yaml'}: price file not found; check $ULTRA_PRICES"
    )
    assert lines[-1] == "no price for gpt-4o-mini: the known part is $0.0000"
    usage = json.loads((folder / "usage.json").read_text())
    assert [step["cost_usd"] for step in usage["steps"]] == [None, 0.0] and usage["total"]["cost_usd"] is None
    assert usage["steps"][0]["prompt_tokens"] == 3_000_000 and "missing.yaml" in usage["prices_problem"]


def judge_run(tmp_path: Path, stub: OpenAIStub, model: str, name: str) -> tuple[object, Path]:
    (tmp_path / "judge.yaml").write_text(
        f"servers:\n  judge: {ROOT / 'servers/judge'}\npipeline:\n  - judge.umbrela_judge\n"
    )
    llm = {"backend": "openai", "base_url": stub.base_url, "model_id": model, "api_key": ""}
    settings = {
        "queries_path": str(ROOT / "data/umbrela/queries.jsonl"),
        "run_path": str(ROOT / "data/umbrela/run.bm25.trec"),
        "corpus_path": str(ROOT / "data/umbrela/corpus.jsonl"),
        "depth": 2,
        "judge_llm": llm,
        "judge_cache": str(tmp_path / "cache.sqlite"),
        "save_path": str(tmp_path / "judge"),
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"judge": settings}))
    done = run_ultra("run", "judge.yaml", "--param", "params.yaml", "--output-dir", name, cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr
    (folder,) = [p for p in (tmp_path / name).iterdir() if p.is_dir()]
    return done, folder


def cost_row(stdout: str, first: str) -> list[str]:
    (line,) = [line for line in stdout.splitlines() if re.match(rf"{re.escape(first)}\s", line)]
    return line.split()


def test_tokens_and_cost_per_step_then_a_cached_rerun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    with OpenAIStub() as stub:
        done, folder = judge_run(tmp_path, stub, "gpt-4o-mini", "first")
        requests = stub.chat_requests()
        again, second = judge_run(tmp_path, stub, "gpt-4o-mini", "second")
        assert len(stub.chat_requests()) == len(requests)  # the rerun sent nothing
    tokens_in = sum(len(_WORD.findall(content_of(r))) for r in requests)
    tokens_out = sum(len(_WORD.findall(hashed_grade(r))) for r in requests)
    cost = (tokens_in * 0.15 + tokens_out * 0.60) / 1e6
    assert cost_row(done.stdout, "judge.umbrela_judge") == [
        "judge.umbrela_judge", "gpt-4o-mini", str(len(requests)), str(36 - len(requests)),
        str(tokens_in), str(tokens_out), f"${cost:.4f}",
    ]  # fmt: skip
    assert cost_row(done.stdout, "total")[-3:] == [str(tokens_in), str(tokens_out), f"${cost:.4f}"]
    usage = json.loads((folder / "usage.json").read_text())
    assert usage["total"]["cost_usd"] == pytest.approx(cost, rel=1e-12)
    assert "prices: prices.yaml of " in done.stdout
    assert cost_row(again.stdout, "judge.umbrela_judge")[2:] == ["0", "36", "0", "0", "$0.0000"]
    rows = json.loads(run_ultra("runs", "--output-dir", "first", "--json", cwd=tmp_path).stdout)
    assert rows[0]["cost"] == pytest.approx(cost, rel=1e-12)


def test_a_model_with_no_price_costs_unknown_never_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    with OpenAIStub() as stub:
        done, folder = judge_run(tmp_path, stub, "our-private-judge", "runs")
        requests = stub.chat_requests()
    tokens_in = sum(len(_WORD.findall(content_of(r))) for r in requests)
    row = cost_row(done.stdout, "judge.umbrela_judge")
    assert row[1] == "our-private-judge" and row[4] == str(tokens_in) and row[-1] == "unknown"
    assert cost_row(done.stdout, "total")[-1] == "unknown"
    assert "no price for our-private-judge: the known part is $0.0000" in done.stdout
    usage = json.loads((folder / "usage.json").read_text())
    assert usage["steps"][0]["cost_usd"] is None and usage["total"]["cost_usd"] is None
    assert "unknown" in run_ultra("runs", "--output-dir", "runs", cwd=tmp_path).stdout


def test_a_jury_step_gets_a_row_per_member_model_priced_as_that_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from ultra_llm.panel import MemberRun, total_usage

    monkeypatch.delenv(PRICES_ENV, raising=False)
    mini = {"requests": 300, "cache_hits": 0, "prompt_tokens": 1_000_000, "completion_tokens": 0}
    big = {"requests": 213, "cache_hits": 13, "prompt_tokens": 2_000_000, "completion_tokens": 0}
    usage = total_usage([MemberRun("gpt-4o-mini", [], mini, []), MemberRun("gpt-4o", [], big, [])])
    jury = {**JUDGE_LLM, "jury": [{"model_id": "gpt-4o-mini"}, {"model_id": "gpt-4o"}]}
    failed = {"count": 1, "total": 300}
    rows = step_records("judge.idk_judge", {"judge_llm": jury}, {"usage": usage, "failed": failed})
    assert [(r["model"], r["requests"], r["prompt_tokens"]) for r in rows] == [
        ("gpt-4o-mini", 300, 1_000_000), ("gpt-4o", 213, 2_000_000)]  # fmt: skip
    assert rows[0]["failed"] == {"count": 1, "total": 300} and "failed" not in rows[1]
    steps = priced(rows)["steps"]
    single = [priced([step_record("judge.a", {"judge_llm": {**JUDGE_LLM, "model_id": m}}, {"usage": u})])
              for m, u in (("gpt-4o-mini", mini), ("gpt-4o", big))]  # fmt: skip
    assert [s["cost_usd"] for s in steps] == [one["total"]["cost_usd"] for one in single]
    assert steps[0]["cost_usd"] != steps[1]["cost_usd"]  # each member at its own model's price
    local = {"backend": "local", "model_id": "a", "jury": [{"model_id": "a"}, {"model_id": "b"}]}
    usage = total_usage([MemberRun("a", [], mini, []), MemberRun("b", [], big, [])])
    rows = step_records("judge.x", {"judge_llm": local}, {"usage": usage})
    assert [r["model"] for r in rows] == ["local:a", "local:b"]
    # one model: one row, as before
    assert step_records("judge.a", {"judge_llm": JUDGE_LLM}, {"usage": USAGE}) == [
        step_record("judge.a", {"judge_llm": JUDGE_LLM}, {"usage": USAGE})]  # fmt: skip


def test_a_system_under_test_shows_its_requests_and_tokens_unpriced_and_out_of_the_total(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    target = {"kind": "openai", "model_id": "gpt-4o-mini", "base_url": "http://x/v1"}  # the system's own model
    spent = {"requests": 12, "cache_hits": 3, "prompt_tokens": 900, "completion_tokens": 80, "items_with_tokens": 9,
             "system_under_test": "openai"}  # fmt: skip
    row = step_record("target.ask", {"target": target}, {"usage": spent, "failed": {"count": 1, "total": 10}})
    assert row["model"] == "target:openai" and row["requests"] == 12 and row["failed"] == {"count": 1, "total": 10}
    judge = step_record("judge.a", {"judge_llm": JUDGE_LLM}, {"usage": USAGE})
    usage = priced([row, judge])
    assert usage["steps"][0]["cost_usd"] is None  # never priced as gpt-4o-mini: it is the user's system
    assert usage["total"]["cost_usd"] == pytest.approx(0.75) and usage["total"]["requests"] == 10
    lines = cost_lines(usage)
    assert next(line for line in lines if line.startswith("target.ask")).split() == [
        "target.ask", "target:openai", "12", "3", "900", "80", "unknown"]  # fmt: skip
    assert "target.ask: the system under test, not priced and not in the total" in lines
    assert not any(line.startswith("no price for") for line in lines)


def test_an_offline_judge_has_no_model_row_and_an_llm_judge_beside_it_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """judge.toxicity (a local classifier) asks no model: the table showed it as gpt-4o-mini (its unused
    judge_llm) with 0 requests. Now it has no row, as a retriever has none, and its failed summary stays in
    usage.json for the gates; judge.toxicity_llm in the same run shows its model and the requests it sent."""
    monkeypatch.delenv(PRICES_ENV, raising=False)
    project = traces_example_project(tmp_path, "eval_traces")
    pipeline = yaml.safe_load((project / "examples/eval_traces.yaml").read_text())
    pipeline["pipeline"].append("judge.toxicity_llm")
    (project / "both.yaml").write_text(yaml.safe_dump(pipeline))
    params = yaml.safe_load((project / "examples/parameters/eval_traces_parameter.yaml").read_text())
    with OpenAIStub(lambda request: '{"toxic": "no", "rationale": "polite"}') as stub:
        params["judge"]["judge_llm"].update(base_url=stub.base_url, api_key="", max_retries=0)
        params["judge"]["judge_cache"] = ""
        (project / "params.yaml").write_text(yaml.safe_dump(params))
        both = ("both.yaml", "--param", "params.yaml")

        def run_then_estimate(pipeline: tuple[str, ...], folder: str) -> tuple[object, object]:
            """The run, then its estimate (which sends nothing and writes no run folder), one after the other."""
            done = run_ultra("run", *pipeline, "--output-dir", folder, cwd=project, timeout=300)
            return done, run_ultra("run", *pipeline, "--estimate", cwd=project, timeout=300)

        ran = at_once({  # each its own run folder, neither reads what the other writes: at once
            "offline": lambda: run_then_estimate(("examples/eval_traces.yaml",), "offline"),
            "both": lambda: run_then_estimate(both, "both"),
        })  # fmt: skip
        sent = len(stub.chat_requests())
    offline, estimate = ran["offline"]
    assert offline.returncode == 0, offline.stderr[-2000:]
    assert "gpt-4o-mini" not in offline.stdout and "tokens in" not in offline.stdout  # no LLM step: no table
    (folder,) = [p for p in (project / "offline").iterdir() if p.is_dir()]
    (step,) = json.loads((folder / "usage.json").read_text())["steps"]
    assert step["step"] == "judge.toxicity" and step["model"] == "" and step["failed"] == {"count": 0, "total": 8}
    assert estimate.returncode == 0, estimate.stderr[-2000:]
    assert "gpt-4o-mini" not in estimate.stdout and "no step would ask a model" in estimate.stdout  # the same

    both, estimate = ran["both"]
    assert both.returncode == 0, both.stderr[-2000:]
    assert 0 < sent <= 8  # one request per distinct answer; the same answer again is a cache hit
    assert not [line for line in both.stdout.splitlines() if re.match(r"judge\.toxicity\s", line)]
    row = cost_row(both.stdout, "judge.toxicity_llm")
    assert row[:4] == ["judge.toxicity_llm", "gpt-4o-mini", str(sent), str(8 - sent)] and row[-1].startswith("$")
    assert cost_row(both.stdout, "total")[1] == str(sent)
    assert estimate.returncode == 0, estimate.stderr[-2000:]
    assert not [line for line in estimate.stdout.splitlines() if re.match(r"judge\.toxicity\s", line)]
    assert cost_row(estimate.stdout, "judge.toxicity_llm")[1] == "gpt-4o-mini"
