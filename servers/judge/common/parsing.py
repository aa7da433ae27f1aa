"""Reading a grade out of an LLM reply, or saying that there is none.

The order is fixed (JUDGES.md): the last ``##final score: N`` marker; else a JSON object's
``score`` field (also inside a code fence); else an explicit phrase such as "final score is N"
or "score: N"; else nothing. A bare digit elsewhere in the text is never taken, so a reply that
mentions "a scale from 0 to 3" is not read as a 3, and an unparseable reply is never a 0.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

_SCORE = r"-?\d+(?:\.\d+)?"  # a score as every reading takes one: the marker, the phrases, a JSON text
_NUMBER = re.compile(_SCORE)
_MARKER = re.compile(rf"#+\s*final\s+score\s*[:=]\s*\**\s*\[?\s*({_SCORE})", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(\{.*?\})\s*```", re.DOTALL)
_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)
_PHRASES = (
    re.compile(rf"\bfinal\s+(?:score|grade|rating|answer)\s*(?:is|of|=|:)\s*\**\s*({_SCORE})", re.IGNORECASE),
    re.compile(
        rf"\b(?:score|grade|rating)\s*(?:is|=|:)\s*\**\s*({_SCORE})\s*\**\s*(?:/\s*3\b|out of 3\b)?\s*$",
        re.IGNORECASE | re.MULTILINE,
    ),
    re.compile(
        rf"\bI\s+(?:would\s+)?(?:give|assign|rate)\s+(?:it|this(?:\s+passage)?)\s+(?:a\s+)?(?:score\s+of\s+)?({_SCORE})\b",
        re.IGNORECASE,
    ),
)


@dataclass(frozen=True)
class ParsedScore:
    """A grade found in a reply, or ``score=None`` with the reason."""

    score: int | None
    how: str  # "marker" | "json" | "phrase" | the reason nothing was found


def parse_grade(text: str | None, *, low: int = 0, high: int = 3) -> ParsedScore:
    """The integer grade in ``text`` within [low, high], found as the module docstring says."""
    if text is None or not text.strip():
        return ParsedScore(None, "empty reply")
    markers = _MARKER.findall(text)
    if markers:
        return _checked(markers[-1], "marker", low, high)
    from_json = _json_score(text)
    if from_json is not None:
        return _checked(from_json, "json", low, high)
    for pattern in _PHRASES:
        found = pattern.findall(text)
        if found:
            return _checked(found[-1], "phrase", low, high)
    return ParsedScore(None, "no '##final score: N' marker, JSON score or explicit score phrase")


def _checked(value: str | int | float, how: str, low: int, high: int) -> ParsedScore:
    if isinstance(value, str) and not _NUMBER.fullmatch(value.strip()):  # not "inf", "nan", "1_0" (Python's 10)
        return ParsedScore(None, f"{how}: score {_shown(value)!r} is not a number")
    if isinstance(value, float) and not math.isfinite(value):  # JSON's NaN, 1e999
        return ParsedScore(None, f"{how}: score {value} is not a finite number")
    number = value if isinstance(value, int) else float(value)  # an int of any size stays exact; digits past 1e308: inf
    if not low <= number <= high:
        return ParsedScore(None, f"{how}: score {_shown(value)} is outside {low}-{high}")
    if number != int(number):
        return ParsedScore(None, f"{how}: score {value} is not an integer")
    return ParsedScore(int(number), how)


def _shown(value: str | int | float) -> str:
    """A score as a reason shows it: its text, cut to 40 characters."""
    text = str(value).strip()
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


def _json_score(text: str) -> str | int | float | None:
    """The ``score`` field of the last JSON object in ``text`` that has one (fenced first)."""
    candidates = _FENCE.findall(text) + _OBJECT.findall(text)
    stripped = text.strip()
    if stripped.startswith("{"):
        candidates.insert(0, stripped)
    found = None
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser recurses: no score here
            continue
        if isinstance(data, dict):
            for key in ("score", "final_score", "grade", "O"):
                if key in data and isinstance(data[key], (int, float, str)) and not isinstance(data[key], bool):
                    found = data[key]
                    break
    return found
