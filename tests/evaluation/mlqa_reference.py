"""MLQA's official scoring (``mlqa_evaluation_v1.py``, facebookresearch/MLQA), restated for the tests.

Written anew, formula for formula, independent of ``servers.evaluation``: the punctuation set is
built the way the script builds it (every code point below ``sys.maxunicode`` whose category starts
with P, plus ASCII punctuation), the article patterns and the zh character range are the script's,
and EM/F1 are computed with the same operations in the same order (so the floats are the same).
"""

from __future__ import annotations

import functools
import re
import string
import sys
import unicodedata
from collections import Counter


@functools.cache
def punct() -> frozenset[str]:
    """The script's punctuation set (built at first use: a walk over every code point, not at collection)."""
    return frozenset({chr(i) for i in range(sys.maxunicode) if unicodedata.category(chr(i)).startswith("P")}) | set(
        string.punctuation
    )


SPACE_SPLIT = {"en", "es", "hi", "vi", "de", "ar"}
ARTICLE_PATTERNS = {
    "en": r"\b(a|an|the)\b",
    "es": r"\b(un|una|unos|unas|el|la|los|las)\b",
    "vi": r"\b(của|là|cái|chiếc|những)\b",
    "de": r"\b(ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des)\b",
    "ar": "\\sال^|ال",
}


def segment_mixed(text: str) -> list[str]:
    """Chinese characters (U+4E00..U+9FA5) and punctuation alone; other runs split on white space."""
    out: list[str] = []
    pending = ""
    for char in text:
        if re.search("[\u4e00-\u9fa5]", char) or char in punct():
            if pending:
                out.extend(pending.split())
                pending = ""
            out.append(char)
        else:
            pending += char
    if pending:
        out.extend(pending.split())
    return out


def normalise(text: str, lang: str) -> str:
    text = "".join(c for c in text.lower() if c not in punct())
    if lang in ARTICLE_PATTERNS:
        text = re.sub(ARTICLE_PATTERNS[lang], " ", text)
    pieces = text.split() if lang in SPACE_SPLIT else segment_mixed(text)
    return " ".join(p for p in pieces if p.strip() != "")


def f1(prediction: str, gold: str, lang: str) -> float:
    pred, ref = normalise(prediction, lang).split(), normalise(gold, lang).split()
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0
    precision = 1.0 * same / len(pred)
    recall = 1.0 * same / len(ref)
    return (2 * precision * recall) / (precision + recall)


def exact(prediction: str, gold: str, lang: str) -> bool:
    return normalise(prediction, lang) == normalise(gold, lang)


def best(metric, prediction: str, golds: list[str], lang: str) -> float:
    return max(metric(prediction, gold, lang) for gold in golds)
