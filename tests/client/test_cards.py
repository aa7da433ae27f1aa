"""The docs' generated parts match the code, and every tool has a card."""

from __future__ import annotations

import re

import pytest

from ultra_client import cards
from ultra_client.commands import builtin_servers


def test_every_generated_part_is_current() -> None:
    stale = [str(p) for p in cards.doc_files() if p.is_file() and cards.render(p.read_text()) != p.read_text()]
    assert not stale, f"run `python -m ultra_client.cards` to refresh: {stale}"


def test_every_tool_has_a_card_in_its_servers_doc() -> None:
    missing = []
    for server in builtin_servers():
        card = cards.ROOT / "docs" / "tools" / f"{server}.md"
        text = card.read_text() if card.is_file() else ""
        missing += [
            f"{server}.{tool}" for tool in cards.server_tools(server) if f"tool {server}.{tool} -->" not in text
        ]
    assert not missing, f"tools without a generated card in docs/tools/<server>.md: {missing}"


@pytest.mark.parametrize("name", sorted(cards.REGISTRIES))
def test_every_registry_table_is_in_the_docs(name: str) -> None:
    text = "".join(p.read_text() for p in cards.doc_files() if p.is_file())
    assert f"<!-- generated: registry {name} -->" in text


def test_a_card_shows_the_parameter_yaml_default_and_the_outputs() -> None:
    from ultra_kit.settings import defaults

    card = cards.generate("tool evaluation.evaluate_trec")
    ks = defaults("evaluation")["ks"]
    assert re.search(r"\| `ks` \| setting \| list\[int\] \| `" + re.escape(str(ks)) + "`", card)
    assert "| `run` | variable, optional |" in card
    assert "| `eval_res` |" in card and "| `result_path` | str |" in card


def test_an_unknown_part_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown generated part"):
        cards.render("<!-- generated: nothing here -->\n<!-- end generated -->")
