"""The docs' generated parts match the code, and every tool has a card."""

from __future__ import annotations

import re

import pytest

from ultra_client import cards
from ultra_client.calls.locate import builtin_servers


def test_every_generated_part_is_current() -> None:
    stale = [str(p) for p in cards.doc_files() if p.is_file() and cards.render(p.read_text()) != p.read_text()]
    assert not stale, f"run `python -m ultra_client.cards` to refresh: {stale}"


def test_every_tool_has_a_card_in_its_servers_doc() -> None:
    missing = [f"{server}.{tool}" for server in builtin_servers() for tool in cards.missing_cards(server)]
    assert not missing, f"tools without a generated card in docs/tools/<server>.md: {missing}"


def test_the_servers_declare_their_registry_tables_in_their_spec() -> None:
    assert {"answer-metrics", "mtrag-metrics", "judges"} <= set(cards.server_tables())
    assert "| em | - |" in cards.generate("registry answer-metrics")


@pytest.mark.parametrize("name", sorted({*cards.LIBRARY_TABLES, *cards.server_tables()}))
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


def test_a_tool_without_a_card_gets_a_skeleton_section(tmp_path, monkeypatch) -> None:
    """A new tool (here: every tool, as the docs folder is empty) is a stale card for --check; a run
    writes a section per tool, with its generated table filled in, and keeps what the doc held."""
    monkeypatch.setattr(cards, "card_path", lambda server: tmp_path / f"{server}.md")
    (tmp_path / "custom.md").write_text("# Custom server\n\nWritten by hand.\n", encoding="utf-8")
    assert cards.missing_cards("report") == ["report", "compare"]
    assert cards.main(["--check"]) == 1
    assert not (tmp_path / "report.md").exists()
    assert cards.add_skeletons(check=False)  # names the docs it completed
    assert cards.missing_cards("report") == [] and cards.missing_cards("custom") == []
    report = cards.render((tmp_path / "report.md").read_text(encoding="utf-8"))
    assert report.startswith("# Report server\n\n## report\n\nTODO: what report is for")
    assert "`ultra call report.report` · Write report.html" in report and "| `save_path` | setting |" in report
    custom = (tmp_path / "custom.md").read_text(encoding="utf-8")
    assert custom.startswith("# Custom server\n\nWritten by hand.\n\n## output_extract_from_boxed\n")
    assert custom.index("## output_extract_from_boxed") < custom.index("## select_qrels")
    assert cards.add_skeletons(check=True) == []  # nothing is lacking any more
