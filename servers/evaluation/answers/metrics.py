"""QA answer metrics over aligned predictions and golds: ``evaluate_answers`` (the ``evaluate`` tool).

Each item has one prediction and one or more golds: a string, a list of aliases, or a list of
answer sets (each a list of aliases) for nested QA. Every metric except ``stringem`` and ``bleu``
is the maximum over all golds of the item; ``stringem`` is the mean over answer sets of "some
alias of the set is a substring of the prediction"; ``bleu`` takes all golds as references.
Texts are normalised and tokenised once per item, whatever the number of metrics and golds, by
the rules of the item's language (``per_language``; ``languages`` for the rules themselves).

An item whose golds are ``[]`` or only empty strings has no answer (SQuAD v2): every metric except
``length`` scores it 1 if the normalised prediction is empty and 0 otherwise (SQuAD v2's official
``compute_exact``/``compute_f1`` against the gold ``""``); ``corpus_bleu`` is over answerable items.
When both kinds occur, the result adds ``avg_<metric>_HasAns``, ``avg_<metric>_NoAns``,
``num_HasAns`` and ``num_NoAns``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from servers.evaluation.answers.normalize import normalize_gold
from servers.evaluation.answers.per_language import (
    LanguageRules,
    answer_language_values,
    item_languages,
    languages_found,
    rules_by_language,
)
from servers.evaluation.answers.rouge import RougeText, rouge_l, rouge_n
from ultra_base.errors import InputError

Gold = str | Sequence[str] | Sequence[Sequence[str]]


@dataclass(frozen=True)
class Scored:
    """A metric's value per item, and any extra result keys (corpus_bleu)."""

    values: list[float]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Batch:
    """All items of one call, and the settings a metric may read."""

    items: list[Item]
    wordnet_path: str
    language_min_confidence: float


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


class Item:
    """One prediction with its golds, normalised and tokenised lazily and only once."""

    def __init__(self, prediction: str, answer_sets: list[list[str]], rules: LanguageRules):
        self.prediction = prediction
        self.answer_sets = answer_sets
        self.golds = [alias for answer_set in answer_sets for alias in answer_set]
        self.language = rules.language
        self._normalize = rules.normalize
        self._rouge = rules.rouge

    @cached_property
    def pred_norm(self) -> str:
        return self._normalize(self.prediction)

    @cached_property
    def pred_tokens(self) -> list[str]:
        return self.pred_norm.split()

    @cached_property
    def gold_norms(self) -> dict[str, str]:
        """Each distinct gold alias -> its normalised text."""
        return {gold: normalize_gold(gold, self._normalize) for gold in self.golds}

    @cached_property
    def gold_tokens(self) -> list[list[str]]:
        return [norm.split() for norm in dict.fromkeys(self.gold_norms.values())]

    @cached_property
    def pred_rouge(self) -> RougeText:
        return self._rouge.text(self.pred_norm)

    @cached_property
    def gold_rouge(self) -> list[RougeText]:
        return [self._rouge.text(norm) for norm in dict.fromkeys(self.gold_norms.values())]

    @cached_property
    def overlap(self) -> list[tuple[float, float, float]]:
        """SQuAD (precision, recall, f1) against each gold."""
        return [token_overlap(self.pred_tokens, gold) for gold in self.gold_tokens]


def token_overlap(prediction: Sequence[str], gold: Sequence[str]) -> tuple[float, float, float]:
    """SQuAD token precision, recall and F1 (multiset intersection); zeros when nothing is shared."""
    common = Counter(prediction) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0, 0.0, 0.0
    precision = same / len(prediction)
    recall = same / len(gold)
    return precision, recall, 2 * precision * recall / (precision + recall)


def exact_match(item: Item) -> float:
    return float(any(item.pred_norm == gold for gold in item.gold_norms.values()))


def accuracy(item: Item) -> float:
    if not item.pred_norm:
        return 0.0
    return float(any(gold in item.pred_norm for gold in item.gold_norms.values()))


def cover_exact_match(item: Item) -> float:
    tokens = set(item.pred_tokens)
    return float(any(all(token in tokens for token in gold) for gold in item.gold_tokens))


def string_exact_match(item: Item) -> float:
    norms = item.gold_norms
    hits = [any(norms[alias] in item.pred_norm for alias in answer_set) for answer_set in item.answer_sets]
    return sum(hits) / len(hits)


def each(score: Callable[[Item], float]) -> Callable[[Batch], Scored]:
    """A metric computed item by item."""
    return lambda batch: Scored([score(item) for item in batch.items])


def max_overlap(index: int) -> Callable[[Item], float]:
    return lambda item: max(scores[index] for scores in item.overlap)


def max_rouge_n(n: int) -> Callable[[Item], float]:
    return lambda item: max(rouge_n(gold, item.pred_rouge, n) for gold in item.gold_rouge)


def max_rouge_l(item: Item) -> float:
    return max(rouge_l(gold, item.pred_rouge) for gold in item.gold_rouge)


def word_count(item: Item) -> float:
    return float(len(item.prediction.split()))


def bleu(batch: Batch) -> Scored:
    from servers.evaluation.answers.bleu import bleu_scores

    if not batch.items:  # every item has no answer: no references for a corpus score
        return Scored([], {"corpus_bleu": None, "bleu_signature": None})
    from servers.evaluation.answers.bleu import bleu_tokenizer

    tokenizers = [bleu_tokenizer(item.language) for item in batch.items]
    scores = bleu_scores([item.prediction for item in batch.items], [item.golds for item in batch.items], tokenizers)
    return Scored(scores.sentence, {"corpus_bleu": scores.corpus, "bleu_signature": scores.sentence_signature})


def answer_language(batch: Batch) -> Scored:
    items = batch.items
    values, found = answer_language_values(
        [i.prediction for i in items], [i.language for i in items], batch.language_min_confidence
    )
    return Scored(values, {"answer_language_ls": found})


def meteor(batch: Batch) -> Scored:
    from servers.evaluation.answers.meteor import english_only, meteor_scores

    english_only([item.language for item in batch.items])
    if not batch.items:  # every item has no answer: nothing to look up in WordNet
        return Scored([])
    predictions = [item.pred_tokens for item in batch.items]
    golds = [item.gold_tokens for item in batch.items]
    return Scored(meteor_scores(predictions, golds, wordnet_path=batch.wordnet_path))


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


def answer_sets(gold: Any, index: int) -> list[list[str]]:
    """An item's golds as answer sets: a string is one set; in a list, a string is its own set.

    Empty (white-space) aliases and empty sets are dropped, as SQuAD v2's script drops empty golds;
    ``[]`` back means the item has no answer.
    """
    if isinstance(gold, str):
        sets = [[gold]]
    elif isinstance(gold, (list, tuple)):
        sets = []
        for entry in gold:
            if isinstance(entry, str):
                sets.append([entry])
            elif isinstance(entry, (list, tuple)) and all(isinstance(a, str) for a in entry):
                sets.append(list(entry))
            else:
                raise InputError(
                    f"gt_ls[{index}]: expected a string, a list of strings or a list of lists of strings, "
                    f"found the entry {entry!r}"
                )
    else:
        raise InputError(
            f'gt_ls[{index}]: expected a gold answer (a string or a list; [] or "" for no answer), found {gold!r}'
        )
    sets = [[alias for alias in answer_set if alias.strip()] for answer_set in sets]
    return [answer_set for answer_set in sets if answer_set]


def check_inputs(pred_ls: Any, gt_ls: Any) -> None:
    """Predictions and golds must be equally long, non-empty lists; predictions strings."""
    if not isinstance(pred_ls, (list, tuple)) or not isinstance(gt_ls, (list, tuple)):
        raise InputError("pred_ls and gt_ls must be lists (one entry per item)")
    if not pred_ls:
        raise InputError("pred_ls is empty: there is nothing to evaluate")
    if len(pred_ls) != len(gt_ls):
        raise InputError(
            f"pred_ls has {len(pred_ls)} predictions but gt_ls has {len(gt_ls)} golds; they are aligned by "
            "position and must have equal length"
        )
    for index, prediction in enumerate(pred_ls):
        if not isinstance(prediction, str):
            raise InputError(f"pred_ls[{index}] is a {type(prediction).__name__}, expected a string")


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def evaluate_answers(
    pred_ls: Sequence[str],
    gt_ls: Sequence[Gold],
    *,
    metrics: Sequence[str],
    normalize: str,
    language: str,
    rouge_stemmer: bool,
    wordnet_path: str,
    language_min_confidence: float,
    questions: Sequence[str] | None = None,
    progress: Callable[[float, float | None, str | None], None] | None = None,
) -> dict[str, Any]:
    """Score predictions against golds: ``{metric: [per item], ..., "avg_<metric>": mean, ...}``.

    With ``bleu`` the result also holds ``corpus_bleu`` and ``bleu_signature``; with both
    answerable and no-answer items, the HasAns/NoAns breakdown (see the module docstring). With
    ``language: auto`` it also holds ``language_ls`` (each item's detected language) and
    ``languages`` (items per language), detected in ``questions`` if given, else in the golds.
    """
    check_inputs(pred_ls, gt_ls)
    names = resolve_metrics(metrics)
    sets = [answer_sets(g, i) for i, g in enumerate(gt_ls)]
    languages = item_languages(language, pred_ls, [[a for s in item for a in s] for item in sets], questions)
    rules = rules_by_language(languages, normalize, rouge_stemmer)
    items = [Item(p, s, rules[lang]) for p, s, lang in zip(pred_ls, sets, languages, strict=True)]
    has_answer = [bool(item.answer_sets) for item in items]
    answerable = Batch([item for item in items if item.answer_sets], wordnet_path, language_min_confidence)
    per_item: dict[str, list[float]] = {}
    extra: dict[str, Any] = {}
    for done, name in enumerate(names):
        metric = METRICS[name]
        scored = metric.compute(answerable if metric.uses_gold else Batch(items, wordnet_path, language_min_confidence))
        extra.update(scored.extra)
        per_item[name] = merge_no_answer(items, has_answer, scored.values) if metric.uses_gold else scored.values
        if progress is not None:
            progress(done + 1, len(names), name)
    result: dict[str, Any] = {**per_item, **{f"avg_{name}": mean(values) for name, values in per_item.items()}}
    if 0 < sum(has_answer) < len(items):
        result.update(split_means(per_item, has_answer))
    if str(language).strip().lower() == "auto":
        extra.update({"language_ls": languages, "languages": languages_found(languages)})
    return {**result, **extra}


def merge_no_answer(items: list[Item], has_answer: list[bool], answered: list[float]) -> list[float]:
    """Values of the answerable items, in order, with each no-answer item scored by abstention.

    A no-answer item scores 1 if its normalised prediction is empty, else 0 (SQuAD v2).
    """
    values = iter(answered)
    return [next(values) if known else float(not item.pred_norm) for item, known in zip(items, has_answer, strict=True)]


def split_means(per_item: dict[str, list[float]], has_answer: list[bool]) -> dict[str, Any]:
    """SQuAD v2's breakdown: the means over answerable (HasAns) and unanswerable (NoAns) items."""
    out: dict[str, Any] = {"num_HasAns": sum(has_answer), "num_NoAns": len(has_answer) - sum(has_answer)}
    for name, values in per_item.items():
        out[f"avg_{name}_HasAns"] = mean([v for v, known in zip(values, has_answer, strict=True) if known])
        out[f"avg_{name}_NoAns"] = mean([v for v, known in zip(values, has_answer, strict=True) if not known])
    return out
