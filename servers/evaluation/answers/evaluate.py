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

from collections.abc import Callable, Sequence
from typing import Any

from servers.evaluation.answers import metrics as registry
from servers.evaluation.answers.items import Batch, Gold, Item, answer_sets, check_inputs
from servers.evaluation.answers.no_answer import mean, merge_no_answer, split_means
from servers.evaluation.answers.per_language import item_languages, languages_found, rules_by_language


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
    names = registry.resolve_metrics(metrics)
    sets = [answer_sets(g, i) for i, g in enumerate(gt_ls)]
    languages = item_languages(language, pred_ls, [[a for s in item for a in s] for item in sets], questions)
    rules = rules_by_language(languages, normalize, rouge_stemmer)
    items = [Item(p, s, rules[lang]) for p, s, lang in zip(pred_ls, sets, languages, strict=True)]
    has_answer = [bool(item.answer_sets) for item in items]
    answerable = Batch([item for item in items if item.answer_sets], wordnet_path, language_min_confidence)
    per_item: dict[str, list[float]] = {}
    extra: dict[str, Any] = {}
    for done, name in enumerate(names):
        metric = registry.METRICS[name]
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
