"""The registry of answer metrics (``METRICS``): every metric of ``evaluate`` is declared once, here;
the tool's field description, its errors, the docs' table and the directions are built from it.
The kernels are in ``kernels``; ``evaluate`` computes them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from servers.evaluation.answers.items import Batch, Scored
from servers.evaluation.answers.kernels import (
    accuracy,
    answer_language,
    bleu,
    cover_exact_match,
    each,
    exact_match,
    max_overlap,
    max_rouge_l,
    max_rouge_n,
    meteor,
    string_exact_match,
    word_count,
)
from ultra_base.errors import InputError
from ultra_base.registry import Registry, Valued


@dataclass(frozen=True)
class Metric(Valued):
    """An answer metric, declared once: the registry entry the tool, errors and docs are built from.

    ``extra``: the optional dependency group it needs; ``reads``: settings it reads, recorded with
    the result; ``uses_gold``: False if it ignores the golds (then no-answer items are scored too);
    ``kind``: what its values are and how the report charts them (binary: 0/1 per item, graded or
    continuous); ``better``: which way is better (gates, compare and ultra sweep read it through
    ``SPEC.metric_directions``).
    """

    name: str
    description: str
    compute: Callable[[Batch], Scored]
    extra: str | None = None
    reads: tuple[str, ...] = ()
    uses_gold: bool = True
    kind: str = "continuous"
    better: str = "higher"


# The settings of ``evaluate`` a metric may read, and the extras (pyproject.toml) a metric may need.
READABLE = ("rouge_stemmer", "wordnet_path", "language_min_confidence")
EXTRAS = (None, "bleu", "meteor", "languages")

METRICS: Registry[Metric] = Registry(
    "answer metric",
    [
        Metric("em", "normalised prediction equals a normalised gold (0/1)", each(exact_match), kind="binary"),
        Metric(
            "acc",
            "a normalised gold is a substring of the normalised prediction (0 for an empty prediction; 0/1)",
            each(accuracy),
            kind="binary",
        ),
        Metric(
            "coverem",
            "every token of a gold occurs among the prediction's tokens (0/1)",
            each(cover_exact_match),
            kind="binary",
        ),
        Metric(
            "stringem",
            'mean over answer sets of "some alias is a substring of the prediction" (ASQA/ALCE STR-EM); in a flat '
            "list each gold is its own set; [0, 1]",
            each(string_exact_match),
        ),
        Metric("f1", "SQuAD token F1: multiset overlap of normalised tokens; [0, 1]", each(max_overlap(2))),
        Metric("precision", "SQuAD token precision (maximised on its own); [0, 1]", each(max_overlap(0))),
        Metric("recall", "SQuAD token recall (maximised on its own); [0, 1]", each(max_overlap(1))),
        Metric(
            "rouge-1",
            "ROUGE-1 F-measure, as rouge_score.RougeScorer(use_stemmer=rouge_stemmer) scores normalised texts; [0, 1]",
            each(max_rouge_n(1)),
            reads=("rouge_stemmer",),
        ),
        Metric(
            "rouge-2",
            "ROUGE-2 F-measure, as rouge_score scores normalised texts; [0, 1]",
            each(max_rouge_n(2)),
            reads=("rouge_stemmer",),
        ),
        Metric(
            "rouge-l",
            "ROUGE-L F-measure, as rouge_score scores normalised texts; [0, 1]",
            each(max_rouge_l),
            reads=("rouge_stemmer",),
        ),
        Metric(
            "bleu",
            "sacreBLEU sentence BLEU (13a for English, see Languages; exp smoothing, effective order) / 100 on the raw "
            "texts, all golds as references; also corpus_bleu (corpus BLEU / 100) and bleu_signature (nrefs:N, or "
            "nrefs:MIN-MAX when items have different numbers of golds); [0, 1]",
            bleu,
            "bleu",
        ),
        Metric(
            "meteor",
            "NLTK meteor_score (alpha 0.9, beta 3, gamma 0.5) on normalised whitespace tokens (needs WordNet "
            "data); [0, 1]",
            meteor,
            "meteor",
            reads=("wordnet_path",),
        ),
        Metric("length", "words (whitespace split) of the raw prediction; >= 0", each(word_count), uses_gold=False),
        Metric(
            "answer_language",
            "0 if the prediction is confidently in another language than the item's (lingua; the language "
            "setting, or with auto the question's; see Languages), else 1; also answer_language_ls (the detected "
            "languages)",
            answer_language,
            "languages",
            reads=("language_min_confidence",),
            uses_gold=False,
        ),
    ],
    choices={"extra": EXTRAS, "kind": ("binary", "graded", "continuous"), "reads": READABLE},
)


def describe_names() -> str:
    """The metric names, with the extra each needs (for the tool's field description)."""
    return METRICS.describe(lambda m: m.name + (f" (extra {m.extra})" if m.extra else ""))


def higher_is_better() -> dict[str, bool]:
    """``{metric: higher_is_better}`` of every answer metric (``SPEC.metric_directions``)."""
    return METRICS.directions()


def registry_markdown() -> str:
    """A Markdown table of the answer metrics of ``evaluate``."""
    return METRICS.table(
        [
            ("name", lambda m: m.name),
            ("extra", lambda m: m.extra or "-"),
            ("kind", lambda m: m.kind),
            ("value per item (the maximum over all golds of the item unless said)", lambda m: m.description),
        ]
    )


def settings_read(names: Sequence[str]) -> list[str]:
    """The settings that the chosen metrics read."""
    return list(dict.fromkeys(setting for name in names for setting in METRICS[name].reads))


def resolve_metrics(names: Sequence[str]) -> list[str]:
    """Lower-cased, de-duplicated metric names; an unknown one lists the known ones."""
    if isinstance(names, str):
        names = [names]
    resolved: list[str] = []
    for name in names:
        key = str(name).strip().lower()
        if key not in METRICS:
            raise InputError(f"unknown metric '{name}'; known metrics: {describe_names()}")
        if key not in resolved:
            resolved.append(key)
    if not resolved:
        raise InputError(f"metrics is empty; choose from: {describe_names()}")
    return resolved
