"""ultra_llm.prices: the shipped price table (dated), a model found by family and without a provider prefix, a user
file ($ULTRA_PRICES) over it, and a bad price file named with what is expected."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ultra_base.errors import InputError
from ultra_llm.prices import PRICES_ENV, price_of, price_table, read_price_file


def test_shipped_prices_are_dated_and_found_by_family_and_provider_prefix(monkeypatch) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    table = price_table()
    mini = price_of("gpt-4o-mini", table)
    assert (mini.input, mini.output) == (0.15, 0.60) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", mini.date)
    assert price_of("gpt-4o-mini-2024-07-18", table) == mini  # a dated snapshot: its family's price
    assert price_of("openai/gpt-4o-mini", table) == mini  # a provider prefix (OpenRouter style)
    assert price_of("gpt-4o", table).input == 2.50  # the longer name does not swallow the shorter one
    assert price_of("claude-3-5-haiku-20241022", table).output == 4.00
    assert price_of("claude-3-5-haiku-latest", table) == price_of("claude-3-5-haiku", table)
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
