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
from servers.evaluation.results import EvaluateResult, item_ids, save_result
from ultra_kit.answered import answered_items
from ultra_kit.languages import script_warning

Progress = Callable[[float, float | None, str | None], None]


def run_evaluate(
    pred_ls: Sequence[str | None],
    gt_ls: Sequence[Gold],
    *,
    id_ls: list[Any] | None,
    q_ls: list[Any] | None,
    metrics: Sequence[str],
    normalize: str,
    language: str,
    rouge_stemmer: bool,
    wordnet_path: str,
    language_min_confidence: float,
    save_path: str,
    progress: Progress | None,
) -> EvaluateResult:
    """The ``evaluate`` tool: the answered items scored (``evaluate_answers``), the settings recorded beside them
    (the settings the chosen metrics read, the kinds and directions, the failed items), the result file written.
    An item whose prediction is None (``target.ask``: the system failed) is left out and listed in
    ``settings.failed_items``."""
    answers, kept, failed = answered_items(pred_ls, gt_ls=gt_ls, id_ls=id_ls, q_ls=q_ls)
    golds = kept["gt_ls"]
    given = {"rouge_stemmer": bool(rouge_stemmer), "wordnet_path": wordnet_path,
             "language_min_confidence": language_min_confidence}  # fmt: skip
    eval_res = evaluate_answers(answers, golds, metrics=metrics, normalize=normalize, language=language,
                                **given, questions=kept["q_ls"], progress=progress)  # fmt: skip
    names = registry.resolve_metrics(metrics)
    settings: dict[str, Any] = {
        "metrics": names,
        "normalize": normalize,
        "language": language,
        "rouge_stemmer": bool(rouge_stemmer),
        "n_items": len(answers),
        "failed_items": failed,  # ids of the items the system did not answer (pred_ls None): not scored
    }
    settings.update({name: given[name] for name in registry.settings_read(names) if name not in settings})
    texts = [*answers, *(text for gold in golds for text in flat_golds(gold))]
    settings["warnings"] = [w for w in [script_warning(texts, language)] if w]  # `ultra run` says it once
    settings["metric_kinds"] = {name: registry.METRICS[name].kind for name in names}  # how the report charts them
    settings["higher_is_better"] = {name: registry.METRICS[name].higher_is_better for name in names}  # compare's
    ids = item_ids(kept["id_ls"], len(answers))
    path = save_result("evaluate", save_path, {"id_ls": ids, **eval_res}, settings)
    return {"eval_res": eval_res, "settings": settings, "result_path": path}


def flat_golds(gold: Gold) -> list[str]:
    """The texts of one item's golds (a string, aliases, or answer sets of aliases)."""
    if isinstance(gold, str):
        return [gold]
    return [text for part in gold for text in ([part] if isinstance(part, str) else part)]


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
    progress: Progress | None = None,
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
