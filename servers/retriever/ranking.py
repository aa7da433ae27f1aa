"""Turning raw scores into rankings and TREC run files that evaluate_trec ranks the same way.

A result list holds only real matches: a BM25 document with score 0 shares no term with the query,
and an ANN index's "-1" id is an unfilled slot, so neither is ever returned (no padding). Ties are
broken by document id descending, as trec_eval does, so the returned order is the scored order.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ultra_base.errors import InputError
from ultra_kit.files import atomic_write


@dataclass(frozen=True)
class Hit:
    """One retrieved passage: corpus position, id and score."""

    index: int
    doc_id: str
    score: float


def rank(candidates: Sequence[tuple[int, float]], doc_ids: Sequence[str], *, top_k: int, keep_zero: bool) -> list[Hit]:
    """The best ``top_k`` of (corpus index, score) pairs, best first, ties by doc id descending.

    Drops invalid indices (< 0, as ANN libraries pad with -1), non-finite scores and, unless
    ``keep_zero``, scores <= 0. Each document appears once.
    """
    seen: set[int] = set()
    hits: list[Hit] = []
    for index, score in candidates:
        index, score = int(index), float(score)
        if index < 0 or index >= len(doc_ids) or index in seen or not math.isfinite(score):
            continue
        if not keep_zero and score <= 0.0:
            continue
        seen.add(index)
        hits.append(Hit(index, doc_ids[index], score))
    hits.sort(key=lambda hit: hit.doc_id, reverse=True)
    hits.sort(key=lambda hit: hit.score, reverse=True)  # stable: equal scores keep doc id descending
    return hits[:top_k]


def query_ids(id_ls: Sequence[object] | None, count: int) -> list[str]:
    """TREC query ids: ``id_ls`` as strings (unique, no white space), or q1..qN when absent."""
    if id_ls is None:
        return [f"q{i}" for i in range(1, count + 1)]
    if len(id_ls) != count:
        raise InputError(f"id_ls has {len(id_ls)} ids for {count} queries; they must be aligned")
    ids = [str(value) for value in id_ls]
    for value in ids:
        if not value or any(ch.isspace() for ch in value):
            raise InputError(f"query id {value!r} is empty or contains white space, which a TREC run cannot hold")
    duplicates = sorted({value for value in ids if ids.count(value) > 1}) if len(set(ids)) != len(ids) else []
    if duplicates:
        raise InputError(f"query ids must be unique in a run; repeated: {duplicates[:5]}")
    return ids


def run_lines(qids: Sequence[str], rankings: Sequence[Sequence[Hit]], tag: str) -> list[str]:
    """TREC run lines ``qid Q0 docid rank score tag``; ``repr`` keeps every score distinct as computed."""
    if not tag or any(ch.isspace() for ch in tag):
        raise InputError(f"run_tag {tag!r} must be a non-empty word without white space")
    return [
        f"{qid} Q0 {hit.doc_id} {position} {float(hit.score)!r} {tag}"
        for qid, hits in zip(qids, rankings, strict=True)
        for position, hit in enumerate(hits, start=1)
    ]


def write_run(path: str | os.PathLike[str], lines: Sequence[str]) -> Path:
    """Write a TREC run file atomically."""
    return atomic_write(path, lambda handle: handle.writelines(line + "\n" for line in lines))
