"""ROUGE-N and ROUGE-L F-measures identical to the ``rouge-score`` package, with cached tokens.

``rouge_score.rouge_scorer.RougeScorer(types, use_stemmer=s).score(target, prediction)`` is
reproduced float for float: the same tokenizer (lower-case, every run of characters outside
``[a-z0-9]`` is a separator, Porter stemming (NLTK's, as rouge-score uses) of tokens longer than
three characters), the same counts and the same floating-point expressions. What differs is the
work: a word's stem is computed once per process, a text is tokenised once however many metrics
and golds use it, and the LCS is bit-parallel (``servers.evaluation.answers.lcs``) instead of a Python
table.

Outside English (``RougeScorer(multilingual=True)``) the tokenizer is ours: ``multilingual_tokenize``
keeps every letter, mark and digit of any script (rouge-score's default keeps only ``[a-z0-9]``, so a
Chinese, Arabic or Hindi text has no token at all) and makes each character of the scripts written
without spaces (CJK ideographs, kana, Thai) a token of its own; nothing is stemmed (Porter is English).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from servers.evaluation.answers.languages import ALL_CHARACTER_SCRIPTS
from servers.evaluation.answers.lcs import lcs_length_masks, match_masks

_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


class Stemmer:
    """rouge-score's stemming of a token (Porter, tokens longer than 3 characters), memoised per word."""

    def __init__(self) -> None:
        from nltk.stem import porter  # rouge-score's own stemmer, imported only when stemming

        self._porter = porter.PorterStemmer()
        self._cache: dict[str, str] = {}

    def __call__(self, word: str) -> str:
        stem = self._cache.get(word)
        if stem is None:
            stem = self._porter.stem(word) if len(word) > 3 else word
            self._cache[word] = stem
        return stem


_STEMMER: Stemmer | None = None


def shared_stemmer() -> Stemmer:
    """The process-wide stemmer (its cache is the point: words repeat across texts)."""
    global _STEMMER
    if _STEMMER is None:
        _STEMMER = Stemmer()
    return _STEMMER


def rouge_tokenize(text: str, stemmer: Stemmer | None = None) -> list[str]:
    """rouge-score's default tokenizer: ``rouge_score.tokenize.tokenize(text, stemmer)``."""
    words = _NON_ALPHANUMERIC.sub(" ", text.lower()).split()
    if stemmer is not None:
        words = [stemmer(word) for word in words]
        # rouge-score's final check; a Porter stem of [a-z0-9]+ never fails it, but keep it exact.
        words = [word for word in words if _VALID_TOKEN.match(word)]
    return words


_CHARACTER_TOKEN = re.compile(f"([{ALL_CHARACTER_SCRIPTS}])")


@lru_cache(maxsize=8192)
def _is_word_character(char: str) -> bool:
    return unicodedata.category(char)[0] in "LMN"  # letters, combining marks (Indic vowel signs), digits


def multilingual_tokenize(text: str) -> list[str]:
    """Lower-cased runs of letters, marks and digits of any script; CJK, kana and Thai one character each."""
    kept = "".join(char if _is_word_character(char) else " " for char in text.lower())
    tokens: list[str] = []
    for piece in _CHARACTER_TOKEN.split(kept):
        tokens.extend(piece.split())
    return tokens


def fmeasure(precision: float, recall: float) -> float:
    """rouge-score's F-measure (``scoring.fmeasure``)."""
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


@dataclass
class RougeText:
    """One tokenised text with the n-gram counts and LCS masks computed on first use."""

    tokens: list[str]
    _ngrams: dict[int, Counter] = field(default_factory=dict, repr=False)

    def ngrams(self, n: int) -> Counter:
        """Counts of the text's n-grams (as rouge-score's ``_create_ngrams``)."""
        counts = self._ngrams.get(n)
        if counts is None:
            tokens = self.tokens
            # Unigrams as plain tokens, longer n-grams as tuples: the counts are what matter.
            counts = Counter(tokens) if n == 1 else Counter(zip(*(tokens[i:] for i in range(n)), strict=False))
            self._ngrams[n] = counts
        return counts

    @cached_property
    def masks(self) -> dict[str, int]:
        return match_masks(self.tokens)


def rouge_n(target: RougeText, prediction: RougeText, n: int) -> float:
    """ROUGE-N F-measure, as rouge-score's ``_score_ngrams`` computes it."""
    return rouge_n_prf(target, prediction, n)[2]


def rouge_n_prf(target: RougeText, prediction: RougeText, n: int) -> tuple[float, float, float]:
    """ROUGE-N (precision, recall, F-measure), as rouge-score's ``_score_ngrams`` computes them."""
    target_ngrams = target.ngrams(n)
    prediction_ngrams = prediction.ngrams(n)
    intersection = 0
    for ngram, count in target_ngrams.items():
        other = prediction_ngrams.get(ngram)
        if other:
            intersection += count if count < other else other
    target_count = max(len(target.tokens) - n + 1, 0)
    prediction_count = max(len(prediction.tokens) - n + 1, 0)
    precision = intersection / max(prediction_count, 1)
    recall = intersection / max(target_count, 1)
    return precision, recall, fmeasure(precision, recall)


def lcs(target: RougeText, prediction: RougeText) -> int:
    """LCS length of two texts' tokens, iterating over the shorter one."""
    if len(target.tokens) <= len(prediction.tokens):
        return lcs_length_masks(target.tokens, prediction.masks, len(prediction.tokens))
    return lcs_length_masks(prediction.tokens, target.masks, len(target.tokens))


def rouge_l(target: RougeText, prediction: RougeText) -> float:
    """ROUGE-L F-measure, as rouge-score's ``_score_lcs`` computes it."""
    return rouge_l_prf(target, prediction)[2]


def rouge_l_prf(target: RougeText, prediction: RougeText) -> tuple[float, float, float]:
    """ROUGE-L (precision, recall, F-measure), as rouge-score's ``_score_lcs`` computes them."""
    if not target.tokens or not prediction.tokens:
        return 0.0, 0.0, 0.0
    length = lcs(target, prediction)
    precision = length / len(prediction.tokens)
    recall = length / len(target.tokens)
    return precision, recall, fmeasure(precision, recall)


class RougeScorer:
    """Tokenise once, score many: ``score(target, prediction)`` like rouge-score's RougeScorer."""

    def __init__(self, use_stemmer: bool = True, multilingual: bool = False) -> None:
        self.multilingual = multilingual
        self.stemmer = shared_stemmer() if use_stemmer and not multilingual else None

    def text(self, text: str) -> RougeText:
        """Tokenise ``text`` for scoring (keep the result to reuse it across metrics and pairs)."""
        if self.multilingual:
            return RougeText(multilingual_tokenize(text))
        return RougeText(rouge_tokenize(text, self.stemmer))

    def score(self, target: str, prediction: str, rouge_types: Sequence[str] = ROUGE_TYPES) -> dict[str, float]:
        """F-measures of ``prediction`` against ``target`` for each of ``rouge_types``."""
        return score_texts(self.text(target), self.text(prediction), rouge_types)


def score_texts(target: RougeText, prediction: RougeText, rouge_types: Sequence[str] = ROUGE_TYPES) -> dict[str, float]:
    """F-measures for already tokenised texts; ``rougeN`` for any N >= 1 and ``rougeL``."""
    scores: dict[str, float] = {}
    for rouge_type in rouge_types:
        if rouge_type == "rougeL":
            scores[rouge_type] = rouge_l(target, prediction)
        elif re.fullmatch(r"rouge[1-9]", rouge_type):
            scores[rouge_type] = rouge_n(target, prediction, int(rouge_type[5:]))
        else:
            raise ValueError(f"unknown ROUGE type {rouge_type!r}; use rouge1..rouge9 or rougeL")
    return scores
