"""BLEU through sacreBLEU (the ``bleu`` extra): sentence BLEU per item and the corpus BLEU.

Both are sacreBLEU's own numbers divided by 100, on the raw (not normalised) texts with
exponential smoothing: the sentence score uses effective order (as ``sacrebleu.sentence_bleu``),
the corpus score does not (as ``sacrebleu.corpus_bleu``). Several golds of an item are several
references. The tokenizer is sacreBLEU's own for the language (``bleu_tokenizer``): ``zh``;
``ja-mecab`` for Japanese where MeCab and its IPA dictionary are installed (extra ``ja``), else
``char``; ``char`` for Thai; ``13a`` (sacreBLEU's default) for every other language. When items
of one call need different tokenizers (``language: auto``), each text is tokenised by its item's
tokenizer first and scored with ``tokenize='none'``; the signature then names them all (``tok:zh+13a``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ultra_base.errors import require


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


def mecab_installed() -> bool:
    """Whether sacreBLEU's ``ja-mecab`` tokenizer can run here (MeCab and the IPA dictionary)."""
    try:
        import ipadic  # noqa: F401
        import MeCab  # noqa: F401
    except ImportError:
        return False
    return True


def bleu_tokenizer(language: str) -> str:
    """sacreBLEU's tokenizer for ``language`` (see the module docstring)."""
    if language == "zh":
        return "zh"
    if language == "ja":
        return "ja-mecab" if mecab_installed() else "char"
    return "char" if language == "th" else "13a"


def pretokenized(
    predictions: Sequence[str], references: Sequence[Sequence[str]], tokenizers: Sequence[str]
) -> tuple[list[str], list[list[str]], str]:
    """Texts tokenised by each item's sacreBLEU tokenizer (for ``tokenize='none'``) and their names."""
    from sacrebleu.metrics.bleu import _get_tokenizer

    by_name = {name: _get_tokenizer(name)() for name in dict.fromkeys(tokenizers)}
    predictions = [by_name[name](p) for p, name in zip(predictions, tokenizers, strict=True)]
    references = [[by_name[name](r) for r in refs] for refs, name in zip(references, tokenizers, strict=True)]
    return predictions, references, "+".join(by_name)


def bleu_scores(
    predictions: Sequence[str], references: Sequence[Sequence[str]], tokenizers: Sequence[str] | None = None
) -> BleuScores:
    """Sentence BLEU of each prediction against its references, and the corpus BLEU of all.

    ``tokenizers``: sacreBLEU's tokenizer name per item (default ``13a`` for all).
    """
    sacrebleu = require("sacrebleu", extra="bleu")
    names = list(dict.fromkeys(tokenizers or ["13a"]))
    tokenize, mixed = names[0], ""
    if len(names) > 1:
        predictions, references, mixed = pretokenized(predictions, references, tokenizers or [])
        tokenize = "none"
    sentence_metric = sacrebleu.BLEU(effective_order=True, tokenize=tokenize)
    sentence = [
        sentence_metric.sentence_score(p, list(refs)).score / 100
        for p, refs in zip(predictions, references, strict=True)
    ]
    corpus_metric = sacrebleu.BLEU(tokenize=tokenize)
    depth = max(len(refs) for refs in references)
    # sacreBLEU reads references as streams (one per reference position); None pads the items
    # that have fewer references.
    streams = [[refs[k] if k < len(refs) else None for refs in references] for k in range(depth)]
    corpus = corpus_metric.corpus_score(list(predictions), streams).score / 100
    signatures = [with_reference_counts(str(sentence_metric.get_signature()), references)]
    signatures.append(str(corpus_metric.get_signature()))
    if mixed:
        signatures = [signature.replace("tok:none", f"tok:{mixed}") for signature in signatures]
    return BleuScores(
        sentence=sentence, corpus=corpus, sentence_signature=signatures[0], corpus_signature=signatures[1]
    )
