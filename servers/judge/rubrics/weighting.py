"""The probability-weighted score of a reply (G-Eval, Liu et al. 2023): sum(p_i * v_i) / sum(p_i).

At the token where the reply's score starts, the endpoint's ``top_logprobs`` list the likeliest tokens;
each that is a score of the scale (``4``, ``" 4"``, ``pass``; a label that takes several tokens is matched
by the one label it begins) adds ``p = exp(logprob)`` to that score, and the weighted score is the mean
of the scores' values under those probabilities. Where that cannot be done the result is ``None`` with
the reason: no log-probabilities came back, they do not spell the reply, the score is not in it, a number
spans several tokens, or no alternative at that position is a score of the scale.
"""

from __future__ import annotations

import math
import re
from typing import Any

from servers.judge.rubrics.declaration import Scale

_SCORE = re.compile(r'"score"\s*:\s*(?:"([^"]*)"|(-?\d+(?:\.\d+)?))')
_EDGES = " \t\n\"'{}:,."


def weighted_score(reply: str, logprobs: list[dict[str, Any]] | None, scale: Scale) -> tuple[float | None, str | None]:
    """(the weighted score, None), or (None, why there is none)."""
    if not logprobs:
        return None, "the endpoint returned no token log-probabilities"
    tokens = [str(entry.get("token", "")) for entry in logprobs]
    spelled = "".join(tokens)
    offset = spelled.find(reply) if reply else -1
    if offset < 0:
        return None, "the token log-probabilities do not spell the reply"
    found = list(_SCORE.finditer(reply))
    if not found:
        return None, "no score value in the reply's text"
    group = 1 if found[-1].group(1) is not None else 2
    start, end = (offset + position for position in found[-1].span(group))
    index, token_start = _token_at(tokens, start)
    token_end = token_start + len(tokens[index])
    partial = token_end < end  # the value goes on in the next tokens
    if partial and not scale.labelled:
        return None, "the score spans several tokens"
    alternatives = logprobs[index].get("top_logprobs") or []
    if not alternatives:
        return None, "no top_logprobs at the score's token (ask with rubric_top_logprobs > 0)"
    mass: dict[Any, float] = {}
    for alternative in alternatives:
        score = _score_of(str(alternative.get("token", "")), scale, prefix=partial)
        logprob = alternative.get("logprob")
        if score is not None and isinstance(logprob, (int, float)):
            mass[score] = mass.get(score, 0.0) + math.exp(logprob)
    total = sum(mass.values())
    if not total:
        return None, "no alternative at the score's token is a score of the scale"
    return sum(p * scale.values[score] for score, p in mass.items()) / total, None


def _token_at(tokens: list[str], position: int) -> tuple[int, int]:
    """The index of the token holding character ``position`` of the spelled text, and where it starts."""
    start = 0
    for index, token in enumerate(tokens):
        if start <= position < start + len(token):
            return index, start
        start += len(token)
    return len(tokens) - 1, start - len(tokens[-1])


def _score_of(token: str, scale: Scale, *, prefix: bool) -> Any:
    """The score ``token`` stands for on ``scale`` (None if none); ``prefix``: it may begin a longer label."""
    word = token.strip(_EDGES)
    if not word:
        return None
    if not scale.labelled:
        return int(word) if re.fullmatch(r"-?\d+", word) and int(word) in scale.values else None
    key = word.lower().replace(" ", "_").replace("-", "_")
    if key in scale.values:
        return key
    if prefix:
        starting = [label for label in scale.values if label.startswith(key)]
        return starting[0] if len(starting) == 1 else None
    return None
