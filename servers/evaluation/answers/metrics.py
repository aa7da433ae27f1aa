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


@dataclass(frozen=True)
class Metric:
    """An answer metric, declared once: the registry entry the tool, errors and docs are built from.

    ``extra``: the optional dependency group it needs; ``reads``: settings it reads, recorded with
    the result; ``uses_gold``: False if it ignores the golds (then no-answer items are scored too).
    """

    name: str
    description: str
    compute: Callable[[Batch], Scored]
    extra: str | None = None
    reads: tuple[str, ...] = ()
    uses_gold: bool = True
    kind: str = "continuous"  # how the report charts it: binary (0/1 per item), graded or continuous
    higher_is_better: bool = True  # gates, compare and ultra sweep read it (SPEC.metric_directions)


METRICS: dict[str, Metric] = {
    m.name: m
    for m in [
        Metric("em", "normalised prediction equals a normalised gold", each(exact_match), kind="binary"),
        Metric("acc", "a normalised gold is a substring of the normalised prediction", each(accuracy), kind="binary"),
        Metric(
            "coverem",
            "every token of a gold occurs among the prediction tokens",
            each(cover_exact_match),
            kind="binary",
        ),
        Metric(
            "stringem", "mean over answer sets: some alias is a substring of the prediction", each(string_exact_match)
        ),
        Metric("f1", "SQuAD token F1", each(max_overlap(2))),
        Metric("precision", "SQuAD token precision", each(max_overlap(0))),
        Metric("recall", "SQuAD token recall", each(max_overlap(1))),
        Metric("rouge-1", "rouge-score ROUGE-1 F-measure", each(max_rouge_n(1)), reads=("rouge_stemmer",)),
        Metric("rouge-2", "rouge-score ROUGE-2 F-measure", each(max_rouge_n(2)), reads=("rouge_stemmer",)),
        Metric("rouge-l", "rouge-score ROUGE-L F-measure", each(max_rouge_l), reads=("rouge_stemmer",)),
        Metric(
            "bleu", "sacreBLEU sentence BLEU (effective order) / 100 over all golds; also corpus_bleu", bleu, "bleu"
        ),
        Metric("meteor", "NLTK METEOR (needs WordNet data)", meteor, "meteor", reads=("wordnet_path",)),
        Metric("length", "words in the prediction", each(word_count), uses_gold=False),
        Metric(
            "answer_language",
            "0 if the prediction is confidently in another language than the item's (lingua; the language "
            "setting, or with auto the question's), else 1; also answer_language_ls",
            answer_language,
            "languages",
            reads=("language_min_confidence",),
            uses_gold=False,
        ),
    ]
}


def describe_names() -> str:
    """The metric names, with the extra each needs (for the tool's field description)."""
    return ", ".join(m.name + (f" (extra {m.extra})" if m.extra else "") for m in METRICS.values())


def higher_is_better() -> dict[str, bool]:
    """``{metric: higher_is_better}`` of every answer metric (``SPEC.metric_directions``)."""
    return {m.name: m.higher_is_better for m in METRICS.values()}


def registry_markdown() -> str:
    """A Markdown table of the answer metrics of ``evaluate``."""
    rows = ["| name | extra | description |", "|---|---|---|"]
    rows += [f"| {m.name} | {m.extra or '-'} | {m.description} |" for m in METRICS.values()]
    return "\n".join(rows) + "\n"


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
