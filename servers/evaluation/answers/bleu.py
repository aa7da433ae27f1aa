"""BLEU through sacreBLEU (the ``bleu`` extra): sentence BLEU per item and the corpus BLEU.

Both are sacreBLEU's own numbers divided by 100, on the raw (not normalised) texts with its
default 13a tokenizer and exponential smoothing: the sentence score uses effective order (as
``sacrebleu.sentence_bleu``), the corpus score does not (as ``sacrebleu.corpus_bleu``). Several
golds of an item are several references.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ultra_kit.errors import require


@dataclass(frozen=True)
class BleuScores:
    """Per-item sentence BLEU, the corpus BLEU (both in [0, 1]) and sacreBLEU's signatures."""

    sentence: list[float]
    corpus: float
    sentence_signature: str
    corpus_signature: str


def with_reference_counts(signature: str, references: Sequence[Sequence[str]]) -> str:
    """sacreBLEU's sentence signature with ``nrefs`` describing every item, not the last one scored.

    ``nrefs:N`` when every item has N references, else ``nrefs:MIN-MAX`` (the range over items).
    """
    counts = [len(refs) for refs in references]
    low, high = min(counts), max(counts)
    described = f"nrefs:{low}" if low == high else f"nrefs:{low}-{high}"
    parts = [described if part.startswith("nrefs:") else part for part in signature.split("|")]
    return "|".join(parts)


def bleu_scores(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> BleuScores:
    """Sentence BLEU of each prediction against its references, and the corpus BLEU of all."""
    sacrebleu = require("sacrebleu", extra="bleu")
    sentence_metric = sacrebleu.BLEU(effective_order=True)
    sentence = [
        sentence_metric.sentence_score(p, list(refs)).score / 100
        for p, refs in zip(predictions, references, strict=True)
    ]
    corpus_metric = sacrebleu.BLEU()
    depth = max(len(refs) for refs in references)
    # sacreBLEU reads references as streams (one per reference position); None pads the items
    # that have fewer references.
    streams = [[refs[k] if k < len(refs) else None for refs in references] for k in range(depth)]
    corpus = corpus_metric.corpus_score(list(predictions), streams).score / 100
    return BleuScores(
        sentence=sentence,
        corpus=corpus,
        sentence_signature=with_reference_counts(str(sentence_metric.get_signature()), references),
        corpus_signature=str(corpus_metric.get_signature()),
    )
