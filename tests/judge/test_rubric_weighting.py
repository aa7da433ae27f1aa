"""The probability-weighted score (G-Eval) from token log-probabilities, each case computed by hand."""

from __future__ import annotations

import math

import pytest

from servers.judge.rubrics.declaration import Scale
from servers.judge.rubrics.weighting import weighted_score

FIVE = Scale({n: float(n) for n in range(1, 6)}, labelled=False)
TEN = Scale({n: float(n) for n in range(1, 11)}, labelled=False)
LABELS = Scale({"pass": 1.0, "partly_right": 0.5, "fail": 0.0}, labelled=True)


def tokens(*pieces: str, tops: dict[int, dict[str, float]]) -> list[dict]:
    return [
        {"token": piece, "logprob": -0.5, "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in
                                                             tops.get(i, {}).items()]}
        for i, piece in enumerate(pieces)
    ]  # fmt: skip


def test_an_integer_score() -> None:
    reply = '{"reasoning": "ok", "score": 3}'
    logprobs = tokens('{"reasoning": "ok", "score": ', "3", "}", tops={1: {"3": 0.5, "2": 0.3, "4 ": 0.1, "x": 0.1}})
    assert weighted_score(reply, logprobs, FIVE) == (pytest.approx((0.5 * 3 + 0.3 * 2 + 0.1 * 4) / 0.9), None)


def test_a_label_of_several_tokens_is_matched_by_its_first() -> None:
    reply = '{"reasoning": "r", "score": "partly_right"}'
    pieces = ('{"reasoning": "r", "score": "', "part", "ly_right", '"}')
    logprobs = tokens(*pieces, tops={1: {"part": 0.6, "pass": 0.3, "fa": 0.1}})
    assert weighted_score(reply, logprobs, LABELS) == (pytest.approx((0.6 * 0.5 + 0.3 * 1 + 0.1 * 0) / 1.0), None)


def test_no_weighted_score_says_why() -> None:
    reply = '{"reasoning": "r", "score": 10}'
    split = tokens('{"reasoning": "r", "score": ', "1", "0", "}", tops={1: {"1": 0.9}})
    assert weighted_score(reply, split, TEN) == (None, "the score spans several tokens")
    assert weighted_score(reply, None, TEN) == (None, "the endpoint returned no token log-probabilities")
    other = tokens("something else", tops={})
    assert weighted_score(reply, other, TEN) == (None, "the token log-probabilities do not spell the reply")
    whole = tokens('{"reasoning": "r", "score": ', "10", "}", tops={1: {"ten": 0.9}})
    assert weighted_score(reply, whole, TEN) == (None, "no alternative at the score's token is a score of the scale")
    bare = tokens('{"reasoning": "r", "score": ', "10", "}", tops={})
    assert weighted_score(reply, bare, TEN)[1].startswith("no top_logprobs at the score's token")
