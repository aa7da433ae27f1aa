"""The grade parser on tricky replies: marker first, then JSON, then explicit phrases; never a bare digit."""

from __future__ import annotations

import pytest

from servers.judge.common.parsing import parse_grade


@pytest.mark.parametrize(
    ("reply", "score", "how"),
    [
        ("##final score: 2", 2, "marker"),
        # The reference parser reads the first digit and turns this into 3.
        ("On a scale from 0 to 3, I weigh M and T.\n##final score: 1", 1, "marker"),
        ("##final score: 3\nOn reflection the passage is off topic.\n##final score: 0", 0, "marker"),
        ("## Final Score: **2**", 2, "marker"),
        ("##final score:3", 3, "marker"),
        ('{"score": 2}', 2, "json"),
        ('```json\n{"intent": "find a law library", "M": 2, "T": 3, "score": 1}\n```', 1, "json"),
        ('Here is my verdict: {"score": "3"}', 3, "json"),
        ("Intent: legal research. M = 2, T = 2. The final score is 2.", 2, "phrase"),
        ("Reasoning about 3 aspects...\nScore: 1", 1, "phrase"),
        ("I would give this passage a score of 2", 2, "phrase"),
    ],
)
def test_grades_found(reply: str, score: int, how: str) -> None:
    parsed = parse_grade(reply)
    assert (parsed.score, parsed.how) == (score, how)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   \n",
        None,
        "The passage is rated on a 0 to 3 scale.",  # a bare digit is never a grade
        "3",
        "I think it deserves 2 or 3.",
        "##final score: 5",  # out of range
        "##final score: 1.5",  # not an integer
        '{"score": 7}',
        '{"relevance": "high"}',
        '```json\n{"score": \n```',  # truncated JSON
    ],
)
def test_no_grade_is_never_a_score(reply: str | None) -> None:
    parsed = parse_grade(reply)
    assert parsed.score is None
    assert parsed.how  # the reason is said


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ('{"score": NaN}', "json: score nan is not a finite number"),  # Python's json reads NaN; int() raised
        ('{"score": 1e999}', "json: score inf is not a finite number"),  # inf; int() raised OverflowError
        ('{"score": "infinity"}', "json: score 'infinity' is not a number"),  # Python's float() reads it
        ('{"score": "nan"}', "json: score 'nan' is not a number"),
        ('{"score": "1_0"}', "json: score '1_0' is not a number"),  # Python's float() reads 10
        ('{"score": ' + "1" * 400 + "}", "json: score 11111111111111111111... (400 characters) is outside 0-20"),
        ('{"score": "' + "1" * 400 + '"}', "json: score 11111111111111111111... (400 characters) is outside 0-20"),
    ],
)
def test_a_number_python_reads_but_a_reply_does_not_hold_is_no_score(reply: str, reason: str) -> None:
    """On a 0-20 scale, where ``1_0`` read as 10 would have been a score; NaN and inf raised out of the parser."""
    parsed = parse_grade(reply, low=0, high=20)
    assert (parsed.score, parsed.how) == (None, reason)


def test_marker_beats_json_and_phrases() -> None:
    reply = '{"score": 3} The final score is 3.\n##final score: 1'
    assert parse_grade(reply).score == 1
