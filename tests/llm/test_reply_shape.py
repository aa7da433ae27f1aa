"""A reply declared once: the schema, the repair text, the reader and an example all come from one ``Reply``."""

from __future__ import annotations

import json

import pytest

from ultra_llm.replies import Reply, Unreadable, array, choice, labels, text

SUPPORT = Reply.of(support=labels(full=1.0, partial=0.5, none=0.0), rationale=text())
VERDICTS = Reply.of(verdicts=array(choice(0, 1)), listed=True)
ALIASED = Reply.of(labels=labels(support="support", supported="support", not_support="not_support"), listed=True)


def test_the_schema_and_the_values_come_from_the_labels() -> None:
    properties = SUPPORT.schema["properties"]
    assert properties["support"] == {"type": "string", "enum": ["full", "partial", "none"]}
    assert SUPPORT.schema["required"] == ["support", "rationale"] and SUPPORT.schema["additionalProperties"] is False
    assert SUPPORT.value("support", "partial") == 0.5
    assert ALIASED.schema["properties"]["labels"]["items"]["enum"] == ["support", "supported", "not_support"]


def test_the_repair_text_is_derived() -> None:
    wanted = '{"support": "full", "partial" or "none", "rationale": "..."}'
    assert SUPPORT.repair() == f"Reply with one JSON object: {wanted}."
    assert VERDICTS.repair(length=3) == "Reply with a JSON array of exactly 3 numbers, each 0 or 1."
    assert ALIASED.repair(length=2) == 'Reply with a JSON array of exactly 2 strings, each "support" or "not_support".'
    questions = Reply.of(questions={**array(text()), "minItems": 3, "maxItems": 3})
    assert questions.repair() == 'Reply with one JSON object: {"questions": [3 strings]}.'


def test_the_default_reader_checks_each_property() -> None:
    assert SUPPORT.read('Sure: {"support": "Full ", "rationale": " yes "}') == {"support": "full", "rationale": "yes"}
    assert SUPPORT.read('{"support": "none"}') == {"support": "none", "rationale": ""}
    with pytest.raises(Unreadable, match="support 'most' is not one of"):
        SUPPORT.read('{"support": "most"}')
    assert VERDICTS.read('{"verdicts": [1, 0]}', length=2) == [1, 0]  # the list inside the object, or bare
    assert VERDICTS.read("[1, 0, 1]") == [1, 0, 1]
    with pytest.raises(Unreadable, match="expected a list of 2 verdicts, got 3"):
        VERDICTS.read("[1, 0, 1]", length=2)
    with pytest.raises(Unreadable, match="must be 0 or 1"):
        VERDICTS.read("[1, true]", length=2)  # a boolean is no verdict
    assert ALIASED.read('["Supported", "not-support"]', length=2) == ["support", "not_support"]


def test_the_example_is_read_by_the_reader_and_the_format_is_sized() -> None:
    assert SUPPORT.read(SUPPORT.example()) == {"support": "full", "rationale": "text"}
    assert json.loads(VERDICTS.example(length=3)) == [0, 0, 0]
    sized = VERDICTS.response_format("verdicts_v1", length=3)["json_schema"]
    assert sized["name"] == "verdicts_v1" and sized["strict"] is True
    assert sized["schema"]["properties"]["verdicts"]["minItems"] == 3
    assert "minItems" not in VERDICTS.schema["properties"]["verdicts"]  # the declaration is left as it is


def test_own_reader_unsent_schema_and_a_listed_reply_of_two_properties() -> None:
    line = Reply(read_with=int, repair_with="Reply with a number.")
    assert (line.read("7"), line.repair(), line.response_format("x")) == (7, "Reply with a number.", None)
    assert Reply.of(labels=labels(a="a"), listed=True, structured=False).response_format("x") is None
    with pytest.raises(ValueError, match="exactly one property, a list"):
        Reply.of(a=text(), b=text(), listed=True)
    with pytest.raises(ValueError, match=r"not \['score'\]: use read_with"):
        Reply.of(score={"type": "integer", "minimum": 0, "maximum": 3})


@pytest.mark.parametrize("grade", ["true", "false", "NaN", "1e999", '"2"'])
def test_a_number_choice_takes_only_a_json_number_among_its_values(grade: str) -> None:
    """JSON's true equals 1 to Python (and false 0), so ``true`` was read as grade 1; a list of verdicts already
    refused it. NaN and infinity are no grade either, nor a number written as text."""
    graded = Reply.of(grade=choice(0, 1, 2, 3))
    assert graded.read('{"grade": 2}') == {"grade": 2} and graded.read('{"grade": 1.0}') == {"grade": 1}
    with pytest.raises(Unreadable, match=r"grade .* is not one of \[0, 1, 2, 3\]"):
        graded.read(f'{{"grade": {grade}}}')
