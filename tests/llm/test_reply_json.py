"""Reading JSON out of an LLM reply: the judge's counted spans and synth's decoded spans, both kept as they were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ultra_llm.replies.json_text import Unreadable, last_json

RECORDED = Path(__file__).resolve().parents[1] / "data" / "llm_replies" / "replies_in_tests.jsonl"
FENCE = "```"
SPANS = ("counted", "decoded")


def reading(text: str, kind: type, spans: str) -> Any:
    """The value read, or ``Unreadable`` (any other exception fails the test)."""
    try:
        return last_json(text, kind, spans=spans)
    except Unreadable:
        return Unreadable


def recorded_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text(encoding="utf-8").splitlines()]


def test_every_reply_the_server_tests_use_reads_as_before() -> None:
    rows = recorded_rows()
    assert len(rows) == 119 and {"judge", "synth"} == {who for row in rows for who in row["used_by"]}
    for row in rows:
        kind = {"dict": dict, "list": list}[row["kind"]]
        for spans, before in (("counted", row["judge_reading"]), ("decoded", row["synth_reading"])):
            expected = Unreadable if before.get("unreadable") else before["value"]
            assert reading(row["reply"], kind, spans) == expected, (spans, row["reply"])
    # the recorded replies hold readable and unreadable ones of both kinds
    readable = [row for row in rows if "value" in row["judge_reading"]]
    assert {row["kind"] for row in readable} == {"dict", "list"} and len(readable) < len(rows)


# (reply, kind, reading with either kind of span): where the two readers agree
AGREED = [
    ('Sure, here it is: {"support": "full"} Hope that helps.', dict, {"support": "full"}),
    ('First {"a": 1} then {"a": 2}', dict, {"a": 2}),
    ('{"a": 1}{"a": 2}', dict, {"a": 2}),
    (f'Here:\n{FENCE}json\n{{"support": "partial"}}\n{FENCE}\nDone.', dict, {"support": "partial"}),
    (f"{FENCE}\n[1, 0]\n{FENCE}", list, [1, 0]),
    # two fenced blocks: the first one that parses wins (fences come before the spans)
    (f'{FENCE}json\n{{"a": 1}}\n{FENCE}\nor\n{FENCE}JSON\n{{"a": 2}}\n{FENCE}', dict, {"a": 1}),
    (f'{FENCE}json\n{{"a": "{FENCE}"}}\n{FENCE}', dict, {"a": FENCE}),  # the whole reply still parses
    ('Verdict: {"reason": "see {x}", "support": "full"}', dict, {"reason": "see {x}", "support": "full"}),
    ('Labels: ["vital", "okay"] and notes [see "]"]', list, ["vital", "okay"]),
    ('{"verdicts": [1, 0]}', list, [1, 0]),  # a list asked for: the one inside the object
    # with prose around it, the last opening brace wins: a nested object, not the outer one
    ('Result: {"opinions": [{"opinion": "x", "biased": "no"}]}', dict, {"opinion": "x", "biased": "no"}),
    ('{"opinions": [{"opinion": "x", "biased": "no"}, {"opin', dict, {"opinion": "x", "biased": "no"}),
    ('{"claims": ["a", "b"', dict, Unreadable),  # truncated
    ('["a", "b"', list, Unreadable),
    ("", dict, Unreadable),
    ("Question: Why?\nAnswer: Because.", dict, Unreadable),
    ('{"a": 1}', list, Unreadable),
    ("[1, 2]", dict, Unreadable),
]


@pytest.mark.parametrize(("text", "kind", "expected"), AGREED)
@pytest.mark.parametrize("spans", SPANS)
def test_tricky_replies_read_the_same_either_way(text: str, kind: type, expected: Any, spans: str) -> None:
    assert reading(text, kind, spans) == expected


# (reply, kind, counted reading, decoded reading): a bracket inside a string is where they part
PARTED = [
    ('Verdict: {"reason": "a } b", "support": "none"}', dict, Unreadable, {"reason": "a } b", "support": "none"}),
    ('Labels: ["a]b", "okay"]', list, Unreadable, ["a]b", "okay"]),
    # the judge reads an earlier object here: a reply it accepts would change its reading under "decoded",
    # which is why the two are kept apart rather than made one
    (
        '{"support": "full"} Correction: {"support": "none", "note": "missing {"}',
        dict,
        {"support": "full"},
        {"support": "none", "note": "missing {"},
    ),
]


@pytest.mark.parametrize(("text", "kind", "counted", "decoded"), PARTED)
def test_a_bracket_inside_a_string_is_where_they_part(text: str, kind: type, counted: Any, decoded: Any) -> None:
    assert reading(text, kind, "counted") == counted
    assert reading(text, kind, "decoded") == decoded


@pytest.mark.parametrize("spans", SPANS)
def test_json_python_cannot_take_is_no_value_not_a_crash(spans: str) -> None:
    too_long = '{"score": ' + "1" * 5000 + "}"  # more digits than int() takes: a ValueError inside json
    assert reading(too_long, dict, spans) is Unreadable
    assert reading(f'{too_long} then {{"score": 2}}', dict, spans) == {"score": 2}
    assert reading("[" * 3000, list, spans) is Unreadable  # deeper than the recursion limit
    assert reading("Ok " + "[" * 3000 + "]" * 3000, list, spans) == []  # the innermost list is the last one


def test_unreadable_is_a_value_error_that_says_what_was_missing() -> None:
    with pytest.raises(ValueError, match=r"^no JSON list in the reply$"):
        last_json("I would rather not.", list, spans="decoded")
    with pytest.raises(Unreadable, match=r"^no JSON dict in the reply$"):
        last_json("[1]", dict, spans="counted")
