"""Cost at the end of ``ultra run``: the price table and its override, tokens and cost per step from a judge run
on the local test server, a second run answered by the cache, and a model with no price."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.openai_stub import _WORD, OpenAIStub, content_of, hashed_grade
from ultra_client.errors import UltraError
from ultra_client.summary.costs import PRICES_ENV, load_prices


def test_the_price_table_and_a_user_file_over_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    built_in = load_prices()
    shipped = yaml.safe_load((ROOT / "ultra_llm" / "prices.yaml").read_text())
    assert built_in.of("gpt-4o-mini") == (0.15, 0.60) and built_in.of("gpt-4o-mini-2024-07-18") == (0.15, 0.60)
    assert built_in.source == f"prices.yaml of {shipped['date']}" and built_in.of("my-model") is None
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        "date: 2026-11-01\nmodels:\n  gpt-4o-mini: {input: 1, output: 2}\n  my-model: {input: 0.5, output: 0}\n"
    )
    monkeypatch.setenv(PRICES_ENV, str(mine))
    over = load_prices()
    assert over.of("gpt-4o-mini") == (1.0, 2.0) and over.of("my-model") == (0.5, 0.0)
    assert over.of("gpt-4o") == built_in.of("gpt-4o") and "mine.yaml of 2026-11-01 over prices.yaml" in over.source
    mine.write_text("models:\n  gpt-4o-mini: {input: -1, output: 2}\n")
    with pytest.raises(UltraError, match=r"mine.yaml: model 'gpt-4o-mini': expected \{input: USD per 1M tokens"):
        load_prices()


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
