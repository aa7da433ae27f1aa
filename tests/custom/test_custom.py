"""The glue tools: the last \\boxed{} with matched braces, and the qrels of the questions asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servers.custom.boxed import extract_boxed
from servers.custom.tools.boxed import output_extract_from_boxed
from servers.custom.tools.qrels import select_qrels
from ultra_base.errors import InputError
from ultra_kit.settings import defaults

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "answer", "found"),
    [
        ("so \\boxed{42}.", "42", "boxed"),
        ("\\boxed{1} then \\boxed{\\frac{1}{2}}", "\\frac{1}{2}", "boxed"),
        ("\\boxed{$x^{2}$}", "x^{2}", "boxed"),
        ("\\boxed{\\text{Paris}}", "Paris", "boxed"),
        ("\\boxed{a \\} b}", "a \\} b", "boxed"),
        ("\\boxed{cut off {here", "cut off {here", "unclosed"),
        ("  plain answer \n", "plain answer", "none"),
        ("", "", "none"),
    ],
)
def test_extract_boxed(text: str, answer: str, found: str) -> None:
    assert extract_boxed(text) == (answer, found) or (extract_boxed(text).answer, extract_boxed(text).found) == (
        answer,
        found,
    )


balanced = st.recursive(
    st.text(alphabet="abc xyz019+=", max_size=8),
    lambda inner: st.tuples(inner, inner, inner).map(lambda t: f"{t[0]}{{{t[1]}}}{t[2]}"),
    max_leaves=6,
)


@given(prefix=st.text(alphabet="abc {}\\", max_size=20), content=balanced)
def test_any_balanced_content_comes_back(prefix: str, content: str) -> None:
    result = extract_boxed(f"{prefix}\\boxed{{{content}}} trailing")
    assert (result.answer, result.found) == (content.strip(), "boxed")


def test_tool_counts_cases() -> None:
    result = output_extract_from_boxed(["\\boxed{a}", "b", None, "\\boxed{c"])
    assert result["pred_ls"] == ["a", "b", "", "c"]
    assert result["extract_info"] == {"boxed": 1, "unclosed": 1, "none": 2}


def test_select_qrels_against_the_shipped_file() -> None:
    lines = [line.split() for line in (ROOT / "data/rag/qrels.trec").read_text().splitlines()]
    first, last = lines[0][0], lines[-1][0]
    result = select_qrels([first, "unjudged", last], qrels_path=str(ROOT / "data/rag/qrels.trec"))
    expected = {q: {d: int(g) for qq, _, d, g in lines if qq == q} for q in (first, last)}
    assert result["qrels"] == expected
    assert result["qrels_info"]["queries_without_judgments"] == ["unjudged"]
    assert result["qrels_info"]["judgments"] == sum(len(v) for v in expected.values())
    with pytest.raises(InputError, match="empty"):
        select_qrels([], qrels_path=defaults("custom")["qrels_path"])
