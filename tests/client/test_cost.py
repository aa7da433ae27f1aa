"""The run-end cost: the price table, an unknown model, and a run against the local stub priced by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_ultra
from tests.judge.conftest import ROOT, llm_settings, oracle
from tests.judge.test_umbrela import sample_grades
from tests.support.openai_stub import OpenAIStub, content_of
from ultra_client.cost import cost_lines, cost_record, step_cost
from ultra_kit.errors import InputError
from ultra_llm.prices import PRICES_ENV, price_of, price_table, read_price_file

JUDGE_LLM = {"backend": "openai", "base_url": "http://x/v1", "model_id": "gpt-4o-mini", "timeout": 5}
USAGE = {"requests": 10, "cache_hits": 2, "prompt_tokens": 3_000_000, "completion_tokens": 500_000}


def test_shipped_prices_are_dated_and_found_by_family_and_provider_prefix(monkeypatch) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    table = price_table()
    mini = price_of("gpt-4o-mini", table)
    assert (mini.input, mini.output) == (0.15, 0.60) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", mini.date)
    assert price_of("gpt-4o-mini-2024-07-18", table) == mini  # a dated snapshot: its family's price
    assert price_of("openai/gpt-4o-mini", table) == mini  # a provider prefix (OpenRouter style)
    assert price_of("gpt-4o", table).input == 2.50  # the longer name does not swallow the shorter one
    assert price_of("claude-3-5-haiku-20241022", table).output == 4.00
    assert price_of("local:SmolLM2-135M").cost(10**6, 10**6) == 0.0  # the local backend costs no money
    assert price_of("stub-judge", table) is None
    assert price_of("gpt-4o-mini-tuned", table) is None  # not a dated snapshot: no guess
    # 3M in at $0.15 and 0.5M out at $0.60 per million: 0.45 + 0.30
    assert mini.cost(3_000_000, 500_000) == pytest.approx(0.75)


def test_a_user_file_overrides_and_adds(tmp_path: Path, monkeypatch) -> None:
    mine = tmp_path / "prices.yaml"
    mine.write_text(
        "date: '2026-01-01'\nmodels:\n  gpt-4o-mini: {input: 1, output: 2}\n  my-model: {input: 0.5, output: 0}\n"
    )
    monkeypatch.setenv(PRICES_ENV, str(mine))
    assert price_of("gpt-4o-mini") == price_of("gpt-4o-mini-2024-07-18")
    assert (price_of("gpt-4o-mini").input, price_of("gpt-4o-mini").date) == (1.0, "2026-01-01")
    assert price_of("my-model").cost(2_000_000, 99) == pytest.approx(1.0)
    assert price_of("gpt-4o").input == 2.50  # the shipped entries the file does not name stay


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("models: [a, b]\n", "a mapping with 'date' and 'models"),
        ("models:\n  m: {input: -1, output: 2}\n", "model 'm' needs 'input' and 'output'"),
        ("models:\n  m: {input: cheap, output: 2}\n", "model 'm' needs 'input' and 'output'"),
        ("models: {m: [\n", "not valid YAML"),
    ],
)
def test_a_bad_price_file_is_named_with_what_is_expected(tmp_path: Path, text: str, expected: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(InputError, match=re.escape(expected)) as caught:
        read_price_file(bad)
    assert str(bad) in str(caught.value)


def test_a_broken_price_file_leaves_the_cost_unknown_and_says_why(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(PRICES_ENV, str(tmp_path / "missing.yaml"))
    cost = step_cost("judge.a", {"judge_llm": JUDGE_LLM}, {"usage": USAGE})
    assert cost.cost is None and cost.tokens_in == 3_000_000
    assert cost_lines([cost])[-1].startswith(f"prices: {tmp_path / 'missing.yaml'}: cannot read the price file")


def test_an_unknown_model_shows_its_tokens_and_cost_unknown_never_zero(monkeypatch) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    known = step_cost("judge.a", {"judge_llm": JUDGE_LLM}, {"usage": USAGE, "aggregate": {}})
    unknown = step_cost("judge.b", {"judge_llm": {**JUDGE_LLM, "model_id": "my-own-llm"}}, {"usage": USAGE})
    assert known.cost == pytest.approx(0.75) and unknown.cost is None
    lines = cost_lines([known, unknown])
    row = next(line for line in lines if line.startswith("judge.b"))
    assert row.split() == ["judge.b", "my-own-llm", "10", "2", "3000000", "500000", "unknown"]
    total = next(line for line in lines if line.startswith("total"))
    assert total.split() == ["total", "20", "4", "6000000", "1000000", "$0.7500", "+", "unknown"]
    assert "$0.0000" not in "\n".join(lines)
    record = cost_record([known, unknown])
    assert record["total_cost"] is None and record["priced_cost"] == pytest.approx(0.75)
    assert cost_lines([unknown])[-1].split()[-1] == "unknown"
    # no usage among the outputs (a classifier, a retriever): not an LLM step
    assert step_cost("evaluation.evaluate_trec", {}, {"eval_res": {"map": 0.3}}) is None
    # the usage inside an output mapping (generation's generate_info), a local model: free
    local = step_cost("generation.generate", {"llm": {"backend": "local", "model_id": "m"}}, {"info": {"usage": USAGE}})
    assert (local.model, local.cost) == ("local:m", 0.0)


def test_a_run_against_the_stub_ends_with_its_cost_computed_by_hand(tmp_path: Path) -> None:
    """examples/umbrela.yaml on the stub, whose usage counts words: the summary's tokens and cost equal the sums
    over the requests the stub served, priced from a user price file."""
    prices = tmp_path / "prices.yaml"
    prices.write_text("date: '2026-02-03'\nmodels:\n  stub-judge: {input: 3, output: 7}\n")
    params = yaml.safe_load((ROOT / "examples" / "parameters" / "umbrela_parameter.yaml").read_text())
    respond = oracle(sample_grades(), default=1)
    with OpenAIStub(responder=respond) as stub:
        params["judge"].update(
            judge_llm={**llm_settings(stub), "api_key": "x"},
            judge_cache=str(tmp_path / "cache.sqlite"),
            save_path=str(tmp_path / "judge"),
        )
        params["evaluation"]["save_path"] = str(tmp_path / "evaluation")
        param_file = tmp_path / "umbrela_parameter.yaml"
        param_file.write_text(yaml.safe_dump(params))
        args = ("run", "examples/umbrela.yaml", "--param", str(param_file), "--output-dir", str(tmp_path / "runs"))
        done = run_ultra(*args, cwd=ROOT, env={PRICES_ENV: str(prices)})
        assert done.returncode == 0, done.stderr[-3000:]
        served = [s.body for s in stub.served if s.path.endswith("/chat/completions")]
        again = run_ultra(*args, cwd=ROOT, env={PRICES_ENV: str(prices)})  # every answer now in the cache
        assert again.returncode == 0, again.stderr[-3000:]
        assert len(stub.served) == len(served)
    tokens_in = sum(len(content_of(body).split()) for body in served)
    tokens_out = sum(len(respond(body).split()) for body in served)
    cost = (tokens_in * 3 + tokens_out * 7) / 1e6
    table = done.stdout.split("LLM cost (prices of 2026-02-03")[1]
    row = next(line for line in table.splitlines() if line.startswith("judge.umbrela_judge"))
    assert row.split() == ["judge.umbrela_judge", "stub-judge", str(len(served)), "9", str(tokens_in),
                           str(tokens_out), f"${cost:.4f}"]  # fmt: skip
    assert next(line for line in table.splitlines() if line.startswith("total")).split()[-1] == f"${cost:.4f}"
    folder = Path(done.stdout.split("done: ")[1].strip())
    record = json.loads((folder / "cost.json").read_text())
    assert record["total_cost"] == pytest.approx(cost) and record["tokens_in"] == tokens_in
    row = next(line for line in again.stdout.splitlines() if line.startswith("judge.umbrela_judge"))
    assert row.split()[2:] == ["0", str(len(served) + 9), "0", "0", "$0.0000"]
