"""The BM25 backend (the ``bm25s`` package): build, save, load and search a sparse index."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servers.retriever.corpus import Passage
from servers.retriever.ranking import Hit, rank
from servers.retriever.tokenize import stopword_set, tokenize
from ultra_base.errors import InputError, require
from ultra_kit.progress import ProgressCallback, no_progress
from ultra_kit.settings import complete_mapping

EXTRA = "rag"
METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


def bm25_options(options: dict[str, Any]) -> dict[str, Any]:
    """The ``bm25`` setting, checked, with the keys left out taken from parameter.yaml."""
    merged = complete_mapping(options, server="retriever", setting="bm25")
    if merged["method"] not in METHODS:
        raise InputError(f"bm25.method must be one of {list(METHODS)}, got {merged['method']!r}")
    try:
        merged["k1"], merged["b"] = float(merged["k1"]), float(merged["b"])
    except (TypeError, ValueError):
        raise InputError("bm25.k1 and bm25.b must be numbers") from None
    stopword_set(merged["stopwords"])  # validates
    return merged


def _bm25s() -> Any:
    """The ``bm25s`` package, with tqdm's monitor thread off where bm25s uses tqdm: bm25s makes a (disabled) bar on
    every index and search, tqdm starts its monitor thread for any bar, and the thread outlives the call. A process
    with a thread running cannot fork safely: ``ultra sweep --workers N`` would draw its plots in one process."""
    bm25s = require("bm25s", extra=EXTRA)
    tqdm = sys.modules.get("tqdm")  # imported by bm25s when installed (an optional dependency of it)
    if tqdm is not None:
        tqdm.tqdm.monitor_interval = 0
    return bm25s


def build(passages: Sequence[Passage], options: dict[str, Any], folder: Path, progress: ProgressCallback = no_progress):
    """Tokenize and index ``passages`` and save the index into ``folder``; returns the bm25s model."""
    bm25s = _bm25s()
    stop = stopword_set(options["stopwords"])
    tokens = []
    total = len(passages)
    for number, passage in enumerate(passages, start=1):
        tokens.append(tokenize(passage.text, stop))
        if number % 1000 == 0 or number == total:
            progress(number, total, f"tokenized {number}/{total} passages")
    model = bm25s.BM25(k1=options["k1"], b=options["b"], method=options["method"])
    model.index(tokens, show_progress=False)
    model.save(str(folder), show_progress=False)
    return model


def load(folder: Path):
    """Load a saved bm25s index (memory-mapped). bm25s reads its JSON files (params, vocabulary) with orjson, whose
    depth limit (1,024 levels) stops a damaged or crafted file: that, or any file bm25s cannot read, is an InputError
    naming the folder and what to do."""
    bm25s = _bm25s()
    try:
        return bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
    except (ValueError, RecursionError, OSError, KeyError, TypeError) as exc:
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise InputError(
            f"the bm25 index files cannot be read ({type(exc).__name__}: {reason}); rebuild the index with "
            "retriever_index and overwrite=true",
            path=str(folder),
        ) from None


def search(
    model: Any, queries: Sequence[str], doc_ids: Sequence[str], *, top_k: int, stopwords: str
) -> list[list[Hit]]:
    """The matching passages of each query, best first; a query without known terms gets none."""
    stop = stopword_set(stopwords)
    vocabulary = model.vocab_dict
    query_tokens = [[t for t in tokenize(q, stop) if t in vocabulary] for q in queries]
    results: list[list[Hit]] = [[] for _ in queries]
    asked = [i for i, tokens in enumerate(query_tokens) if tokens]
    if not asked:
        return results
    k = min(top_k, len(doc_ids))
    indices, scores = model.retrieve([query_tokens[i] for i in asked], k=k, show_progress=False, n_threads=1)
    for row, position in enumerate(asked):
        results[position] = rank(
            list(zip(indices[row], scores[row], strict=True)), doc_ids, top_k=top_k, keep_zero=False
        )
    return results
