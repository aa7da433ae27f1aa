"""``ultra_kit.mtrag.references``: the reference answer of an MT-RAG record, as evaluation and target read it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ultra_base.errors import InputError
from ultra_kit.mtrag.references import first_reference

ROOT = Path(__file__).resolve().parents[3]


def test_the_first_target_of_each_record_of_ibms_sample() -> None:
    records = [json.loads(line) for line in (ROOT / "data/mtrag/responses-10.jsonl").read_text().splitlines()]
    texts = [first_reference(record["targets"], i) for i, record in enumerate(records)]
    assert texts[0] == "I'm sorry, but I don't have the answer to your question."
    assert texts == [record["targets"][0]["text"] for record in records]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain text", "plain text"),
        (["first", "second"], "first"),
        ([{"speaker": "agent", "text": "first"}, {"text": "second"}], "first"),
        (None, None),  # no reference given
        ([], None),
    ],
)
def test_the_forms_read(value: object, text: str | None) -> None:
    assert first_reference(value, 0) == text


@pytest.mark.parametrize(
    "value", [3, {"text": "a mapping, not a list"}, [{"speaker": "agent"}], [7], ["x" * 500, 1][1:]]
)
def test_anything_else_names_the_item(value: object) -> None:
    with pytest.raises(InputError, match=r"^gt_ls\[4\]: expected a reference answer") as raised:
        first_reference(value, 4)
    assert len(str(raised.value)) < 250  # a long value is cut in the message
