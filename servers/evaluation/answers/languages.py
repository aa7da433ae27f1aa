"""Answer normalisation per language, after MLQA's official ``evaluate_mlqa.py`` (Lewis et al. 2020).

MLQA's ``normalize_answer(s, lang)``: lower-case; delete every character whose Unicode category
starts with ``P`` (and ASCII punctuation); remove the language's articles; split into tokens, by
white space, or for ``zh`` by "mixed segmentation" (each character of U+4E00..U+9FA5 is a token,
runs of other characters are split on white space); join the tokens with one space.

Our extensions, which MLQA does not have: ``ja`` and ``th`` use mixed segmentation too, with
their scripts as the character-level ones (kana and all CJK ideographs; the Thai block); any
other language (ISO 639-1) is split by white space without article removal. ``en`` keeps the
``normalize`` setting (``squad``, ``ultrarag``: today's behaviour); ``normalize: mlqa`` gives
MLQA's ``en`` (Unicode punctuation deleted). ``ultrarag`` elsewhere replaces punctuation by a
space instead of deleting it, as UltraRAG does in English.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from ultra_base.errors import InputError

# MLQA's remove_articles, pattern by pattern (ar's is MLQA's own: every "ال" becomes a space).
ARTICLES: dict[str, str | None] = {
    "en": r"\b(a|an|the)\b",
    "es": r"\b(un|una|unos|unas|el|la|los|las)\b",
    "hi": None,  # Hindi does not have formal articles
    "vi": r"\b(của|là|cái|chiếc|những)\b",
    "de": r"\b(ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des)\b",
    "ar": r"\sال^|ال",
    "zh": None,  # Chinese does not have formal articles
}
MLQA_LANGUAGES = tuple(ARTICLES)

# Scripts scored one character per token ("mixed segmentation"); zh is MLQA's exact range.
CHARACTER_SCRIPTS: dict[str, str] = {
    "zh": "\u4e00-\u9fa5",
    "ja": "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f",
    "th": "\u0e00-\u0e7f",
}
# Every script above, for tokenisers that do not depend on the language (ROUGE).
ALL_CHARACTER_SCRIPTS = "".join(dict.fromkeys(CHARACTER_SCRIPTS.values()))

STYLES = ("squad", "ultrarag", "mlqa")


@lru_cache(maxsize=4096)
def is_punctuation(char: str) -> bool:
    """MLQA's ``PUNCT``: Unicode category P* or ASCII punctuation."""
    return unicodedata.category(char).startswith("P") or char in string.punctuation


def remove_punctuation(text: str, replacement: str = "") -> str:
    """Every punctuation character deleted (MLQA) or replaced (``replacement``)."""
    return "".join(replacement if is_punctuation(char) else char for char in text)


@lru_cache(maxsize=8)
def _character_pattern(language: str) -> re.Pattern[str] | None:
    script = CHARACTER_SCRIPTS.get(language)
    return re.compile(f"([{script}])") if script else None


def mixed_segmentation(text: str, language: str) -> list[str]:
    """MLQA's ``mixed_segmentation``: each character of the language's script alone, the rest by white space.

    ``text`` has had its punctuation removed already (MLQA's order), so MLQA's own punctuation check
    inside the segmentation never fires and is left out.
    """
    pattern = _character_pattern(language)
    if pattern is None:
        return text.split()
    tokens: list[str] = []
    for piece in pattern.split(text):
        tokens.extend(piece.split())  # a script character is one token; a run between them, its words
    return tokens


def mlqa_normalize(text: str, language: str, punctuation_to_space: bool = False) -> str:
    """MLQA's ``normalize_answer(text, language)`` (extended to ja, th and every other language)."""
    text = remove_punctuation(text.lower(), " " if punctuation_to_space else "")
    articles = ARTICLES.get(language)
    if articles:
        text = re.sub(articles, " ", text)
    return " ".join(mixed_segmentation(text, language))


_BOOLEANS = {"True": "yes", "False": "no"}


def language_normalizer(language: str, style: str, english: dict[str, Callable[[str], str]]) -> Callable[[str], str]:
    """The normalisation of ``language`` in ``style``; ``english`` holds today's en functions by style."""
    if style not in STYLES:
        raise InputError(f"unknown normalize '{style}'; use one of: {', '.join(STYLES)}")
    if language == "en" and style in english:
        return english[style]
    if style == "ultrarag":
        return lambda text: mlqa_normalize(_BOOLEANS.get(text, text).replace("_", " "), language, True)
    return lambda text: mlqa_normalize(text, language)
