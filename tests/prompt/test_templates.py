"""Prompt templates: lookup order, sandbox, strict variables, the tools' output."""

from __future__ import annotations

from pathlib import Path

import pytest

from servers.prompt.rendering import available, load_template, shorten
from servers.prompt.tools import qa
from ultra_base.errors import InputError
from ultra_kit.factory import tool_settings
from ultra_kit.settings import defaults


def call(tool, *args, **given):
    """``tool`` called in Python with the settings not given taken from parameter.yaml."""
    return tool(*args, **{**tool_settings(tool, defaults("prompt")), **given})


def test_rag_prompt_holds_question_and_numbered_passages() -> None:
    result = call(qa.qa_rag_boxed, ["Who?", "What?"], [["alpha beta gamma", "delta"], []], max_passage_words=2)
    first, second = result["prompt_ls"]
    assert "Passage 1: alpha beta ...\n" in first and "Passage 2: delta\n" in first
    assert first.rstrip().endswith("Question: Who?") and "\\boxed{}" in first
    assert "Passage" not in second.split("\n\n", 1)[1]
    assert result["prompt_info"]["template"].startswith("qa_rag_boxed@")


def test_misaligned_inputs() -> None:
    with pytest.raises(InputError, match="aligned"):
        call(qa.qa_rag_boxed, ["a", "b"], [["p"]])


def test_user_folder_comes_first_and_paths_work(tmp_path: Path) -> None:
    (tmp_path / "qa_boxed.jinja").write_text("Mine: {{ question }}")
    assert call(qa.qa_boxed, ["x"], template_dirs=[str(tmp_path)])["prompt_ls"] == ["Mine: x\n"]
    (tmp_path / "other.jinja").write_text("Q={{ question }}")
    by_path = call(qa.qa_boxed, ["y"], qa_template=str(tmp_path / "other.jinja"), template_dirs=[str(tmp_path)])
    assert by_path["prompt_ls"] == ["Q=y\n"]
    assert call(qa.qa_boxed, ["z"], qa_template="other.jinja", template_dirs=[str(tmp_path)])["prompt_ls"] == ["Q=z\n"]
    assert {"qa_boxed", "qa_rag_boxed", "other"} <= available(template_dirs=[str(tmp_path)])


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{ questoin }}", "undefined variable"),
        ("{{ question.__class__.__mro__ }}", "sandbox|undefined"),
        ("{% for x in %}", "syntax error"),
    ],
)
def test_bad_templates(tmp_path: Path, source: str, message: str) -> None:
    file = tmp_path / "bad.jinja"
    file.write_text(source)
    with pytest.raises(InputError, match=message):
        load_template(str(file), template_dirs=[str(tmp_path)]).render(question="q")


def test_unknown_and_unsafe_names() -> None:
    with pytest.raises(InputError, match="Available:.*qa_rag_boxed"):
        load_template("nope", template_dirs=[])
    with pytest.raises(InputError):
        load_template("qa rag; rm", template_dirs=[])


def test_shorten() -> None:
    assert shorten("a b c", 0) == "a b c"
    assert shorten("a b c", 3) == "a b c"
    assert shorten("a  b c", 2) == "a b ..."
