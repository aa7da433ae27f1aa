"""A TREC run ``{qid: {docid: score}}`` from per-item rankings: the lists get_data reads from traces
(``id_ls`` and the context ids and scores) or a retriever returns (``ret_ids``, ``ret_scores``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ultra_base.errors import InputError


@dataclass
class Run:
    """The run and what was done to make it."""

    run: dict[str, dict[str, float]] = field(default_factory=dict)
    without_ranking: list[str] = field(default_factory=list)
    scored_by_rank: int = 0
    dropped_docids: int = 0


def rankings_run(id_ls: list[Any], ret_ids: list[Any], ret_scores: list[Any] | None) -> Run:
    """``{id_ls[i]: {ret_ids[i][j]: score}}``: the recorded score when every passage of the item has one,
    else ``n - j`` (the first of n passages scores n), so the ranking is the recorded order either way.

    Empty and repeated docids are dropped (the first of a repeated docid keeps its place); an item with no
    ranking is left out of the run (trec_eval -c scores a judged query missing from the run as 0). Misaligned
    lists, repeated or non-string query ids and non-string docids are refused.
    """
    _check_aligned(id_ls, ret_ids, ret_scores)
    made = Run()
    for i, (qid, ids) in enumerate(zip(id_ls, ret_ids, strict=True)):
        where = f"item {i} (id_ls[{i}] = {qid!r})"
        if not isinstance(qid, str) or not qid:
            raise InputError(f"id_ls[{i}] must be a non-empty string, got {type(qid).__name__} {qid!r}")
        if qid in made.run or qid in made.without_ranking:
            raise InputError(f"id_ls[{i}] = {qid!r} is repeated; a run needs one ranking per query id")
        if not isinstance(ids, list):
            raise InputError(f"ret_ids of {where} must be a list of docids, got {type(ids).__name__}")
        scores = _item_scores(ret_scores[i], len(ids), where) if ret_scores is not None else None
        if scores is None:
            made.scored_by_rank += bool(ids)
            scores = [float(len(ids) - j) for j in range(len(ids))]
        ranking: dict[str, float] = {}
        for j, (docid, score) in enumerate(zip(ids, scores, strict=True)):
            if not isinstance(docid, str):
                raise InputError(f"ret_ids[{i}][{j}] of {where} must be a string, got {type(docid).__name__} {docid!r}")
            if not docid or docid in ranking:
                made.dropped_docids += 1
                continue
            ranking[docid] = score
        if ranking:
            made.run[qid] = ranking
        else:
            made.without_ranking.append(qid)
    if not made.run:
        raise InputError("no item has a ranking (every ret_ids list is empty); map ret_ids to the context ids")
    return made


def _check_aligned(id_ls: list[Any], ret_ids: list[Any], ret_scores: list[Any] | None) -> None:
    if not id_ls:
        raise InputError("id_ls is empty; map id_ls in get_data's key_map (e.g. id_ls: trace_id)")
    if len(ret_ids) != len(id_ls):
        raise InputError(f"ret_ids has {len(ret_ids)} rankings for {len(id_ls)} ids in id_ls; they must be aligned")
    if ret_scores is not None and len(ret_scores) != len(id_ls):
        raise InputError(f"ret_scores has {len(ret_scores)} lists for {len(id_ls)} ids in id_ls; they must be aligned")


def _item_scores(scores: Any, n: int, where: str) -> list[float] | None:
    """The item's recorded scores, or None (ranked by position) when the item has none or misses some."""
    if not isinstance(scores, list):
        raise InputError(f"ret_scores of {where} must be a list of scores, got {type(scores).__name__}")
    if scores and len(scores) != n:
        raise InputError(f"ret_scores of {where} has {len(scores)} scores for {n} docids; they must be aligned")
    if not scores or any(not _is_score(s) for s in scores):
        return None
    return [float(s) for s in scores]


def _is_score(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
