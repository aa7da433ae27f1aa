"""The BM25 tokenizer: lower-cased word tokens without English stop words; queries and passages alike."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=4)
def stopword_set(stopwords: str) -> frozenset[str]:
    """The stop words for ``stopwords``: 'en' (bm25s's English list) or '' / 'none' for none."""
    if stopwords in ("", "none", None):
        return frozenset()
    if stopwords != "en":
        from ultra_base.errors import InputError

        raise InputError(f"bm25.stopwords must be 'en' or 'none', got {stopwords!r}")
    from ultra_base.errors import require

    return frozenset(require("bm25s.stopwords", extra="rag").STOPWORDS_EN)


def tokenize(text: str, stopwords: frozenset[str] = frozenset()) -> list[str]:
    """Lower-cased ``\\w+`` tokens of ``text`` that are not in ``stopwords``."""
    return [token for token in _WORD.findall(text.lower()) if token not in stopwords]
