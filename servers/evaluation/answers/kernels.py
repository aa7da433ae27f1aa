"""The answer metrics' kernels: each scores a ``Batch`` of items (``each`` lifts a per-item score).

Every kernel except ``stringem``'s and ``bleu`` is the maximum over all golds of the item;
``stringem`` is the mean over answer sets of "some alias of the set is a substring of the
prediction"; ``bleu`` takes all golds as references.
"""

from __future__ import annotations

from collections.abc import Callable

from servers.evaluation.answers.items import Batch, Item, Scored
from servers.evaluation.answers.per_language import answer_language_values
from servers.evaluation.answers.rouge import rouge_l, rouge_n


def exact_match(item: Item) -> float:
    return float(any(item.pred_norm == gold for gold in item.matched_golds))


def accuracy(item: Item) -> float:
    """A gold within the prediction; a gold that normalises to nothing is within only an empty prediction."""
    return float(any(gold in item.pred_norm if gold else not item.pred_norm for gold in item.matched_golds))


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
