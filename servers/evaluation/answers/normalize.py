"""Answer normalisation before matching: SQuAD's (the default) and UltraRAG's.

``squad``: lower-case, delete ASCII punctuation, remove the articles a/an/the as words, collapse
white space (SQuAD v1.1, FlashRAG, MT-RAG).
``ultrarag``: whole-string "True"/"False" -> yes/no, ``_`` -> space, lower-case, punctuation plus
curly quotes, acute accent and backtick *replaced by a space*, articles removed, white space
collapsed (UltraRAG's ``normalize_text``).

For the substring and ROUGE metrics (coverem, stringem, rouge-*), a gold answer that normalises to the
empty string keeps its lower-cased raw text instead (``normalize_gold``): otherwise a gold such as "A" or
"?" would be a substring of every prediction. EM, acc and F1 follow the official scripts instead
(``items.Item.matched_golds``): SQuAD v2's drops such a gold (an item left with none is the empty answer),
MLQA's (``normalize: mlqa``) keeps it.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_DELETE_PUNCTUATION = str.maketrans("", "", string.punctuation)
_PUNCTUATION_TO_SPACE = str.maketrans({ch: " " for ch in string.punctuation + "\u2018\u2019\u00b4`"})
_BOOLEANS = {"True": "yes", "False": "no"}


def squad_normalize(text: str) -> str:
    """SQuAD normalisation: lower, drop punctuation, drop articles, collapse white space."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_DELETE_PUNCTUATION)).split())


def ultrarag_normalize(text: str) -> str:
    """UltraRAG normalisation: booleans to yes/no, ``_`` and punctuation to spaces, drop articles."""
    text = _BOOLEANS.get(text, text).replace("_", " ").lower().translate(_PUNCTUATION_TO_SPACE)
    return " ".join(_ARTICLES.sub(" ", text).split())


# English only; other languages (and normalize: mlqa) are in ``languages``.
NORMALIZERS: dict[str, Callable[[str], str]] = {"squad": squad_normalize, "ultrarag": ultrarag_normalize}


def normalize_gold(text: str, normalize: Callable[[str], str]) -> str:
    """Normalise a gold answer, keeping its lower-cased raw text when normalisation empties it."""
    normalized = normalize(text)
    return normalized if normalized else text.lower()
