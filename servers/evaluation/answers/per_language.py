"""Which rules score each item of ``evaluate``: its language (given, or detected with ``auto``) and
that language's normalisation and ROUGE tokenizer, built once per language of the call."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from servers.evaluation.answers.languages import language_normalizer
from servers.evaluation.answers.normalize import NORMALIZERS
from servers.evaluation.answers.rouge import RougeScorer
from ultra_base.errors import InputError
from ultra_kit.languages import (
    AUTO,
    UNDETERMINED,
    check_language,
    detect_languages,
    other_language,
)


@dataclass(frozen=True)
class LanguageRules:
    """One language's normalisation and ROUGE scorer (``und``: en's rules). ``mlqa``: EM and F1 treat a gold that
    normalises to nothing as MLQA's script does (kept), else as SQuAD v2's (dropped; ``items.Item.matched_golds``)."""

    language: str
    normalize: Callable[[str], str]
    rouge: RougeScorer
    mlqa: bool = False


def rules_by_language(languages: Sequence[str], normalize: str, rouge_stemmer: bool) -> dict[str, LanguageRules]:
    """The rules of every language among ``languages`` (``und`` gets en's)."""
    rules: dict[str, LanguageRules] = {}
    for language in dict.fromkeys(languages):
        code = "en" if language == UNDETERMINED else language
        normalizer = language_normalizer(code, normalize, NORMALIZERS)
        scorer = RougeScorer(use_stemmer=bool(rouge_stemmer), multilingual=code != "en")
        rules[language] = LanguageRules(language, normalizer, scorer, mlqa=normalize == "mlqa")
    return rules


def question_text(question: Any) -> str:
    """A question's text: the string, or the texts of its conversation turns (``[{speaker, text}, ...]``)."""
    if isinstance(question, (list, tuple)):
        return " ".join(str(t.get("text", "")) if isinstance(t, dict) else str(t) for t in question)
    return str(question)


def item_languages(
    language: str, predictions: Sequence[str], golds: Sequence[list[str]], questions: Sequence[str] | None
) -> list[str]:
    """Each item's language: ``language`` for all, or with ``auto`` the language detected in its
    question when ``questions`` are given (the surest: answers are often names or numbers), else in its golds.

    An item whose text tells nothing (numbers, no answer) is detected from its prediction, and
    ``und`` if that tells nothing either.
    """
    code = check_language(language)
    if code != AUTO:
        return [code] * len(predictions)
    if questions is not None and len(questions) != len(predictions):
        raise InputError(f"q_ls has {len(questions)} questions but pred_ls has {len(predictions)}; give one per item")
    texts = [question_text(q) for q in questions] if questions is not None else [" ".join(item) for item in golds]
    found = detect_languages(texts)
    retry = [index for index, lang in enumerate(found) if lang is None]
    for index, lang in zip(retry, detect_languages([predictions[i] for i in retry]), strict=True):
        found[index] = lang
    return [lang or UNDETERMINED for lang in found]


def answer_language_values(
    answers: Sequence[str], languages: Sequence[str], min_confidence: float
) -> tuple[list[float], list[str]]:
    """Per answer 0.0 when it is not in its item's language (``ultra_kit.languages.other_language``),
    else 1.0; and the languages detected (``und`` when none)."""
    flags, found = other_language(list(answers), list(languages), min_confidence)
    return [0.0 if flag else 1.0 for flag in flags], found


def languages_found(languages: Sequence[str]) -> dict[str, int]:
    """How many items are in each language, most frequent first."""
    return dict(Counter(languages).most_common())
