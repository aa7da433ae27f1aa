"""Rank a run the trec_eval way and find where the relevant documents land, vectorised over queries.

trec_eval sorts each query's documents by score descending, ties broken by docid descending in
byte order, then looks up each document's grade. Every measure we support depends only on the
ranks of the documents whose grade matters (grade > 0, or grade >= relevance_level), so instead of
sorting millions of docid strings this module:

1. orders rows by (query, score descending) with numpy, skipping the sort when the file is
   already in that order (as run files usually are);
2. finds the rows judged with a grade that matters by a fingerprint join against the qrels,
   verified on the actual docid bytes;
3. resolves docid tie-breaking only inside groups of equal scores that hold such a row next to a
   row of a different grade, where the order can change a measure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from servers.core.trec.table import TrecTable, rekey

_BLOCK = 1 << 20  # rows per block when scanning the run's keys


@dataclass(frozen=True)
class Hits:
    """The rows of a run whose grade matters (or every judged row): query index, 0-based rank and grade,
    sorted by (query, rank)."""

    query: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    num_ret: np.ndarray  # documents retrieved per query (after max_depth)


def rank_hits(
    run: TrecTable,
    run_query: np.ndarray,
    qrels: TrecTable,
    qrels_query: np.ndarray,
    num_queries: int,
    *,
    relevance_level: int,
    max_depth: int | None = None,
    keep_all_judged: bool = False,
) -> Hits:
    """Rank ``run`` per query and return where its judged documents with a grade that matters land.

    ``run_query`` / ``qrels_query`` give each row's index in the evaluated query set (-1: not
    evaluated). Rows of queries outside the set are ignored. ``keep_all_judged`` keeps every judged
    row, whatever its grade (for bpref, infAP, unj ...); otherwise only rows whose grade matters.
    """
    rows = np.flatnonzero(run_query >= 0) if np.any(run_query < 0) else None
    query = run_query if rows is None else run_query[rows]
    scores = run.values if rows is None else run.values[rows]

    order = _order_by_score(query, scores)
    if order is not None:
        rows = order if rows is None else rows[order]
        query, scores = query[order], scores[order]
    num_ret = np.bincount(query, minlength=num_queries).astype(np.int64)

    if keep_all_judged:
        matters = np.ones(len(qrels.values), dtype=bool)
    else:
        matters = (qrels.values > 0) | (qrels.values >= relevance_level)
    position, grade = _judged_positions(run, rows, query, qrels, qrels_query, matters)
    position = _break_ties(run, rows, query, scores, position, grade)

    block_starts = np.concatenate(([0], np.flatnonzero(query[1:] != query[:-1]) + 1))
    hit_query = query[position]
    rank = position - block_starts[np.searchsorted(block_starts, position, side="right") - 1]
    if max_depth is not None:
        keep = rank < max_depth
        hit_query, rank, grade = hit_query[keep], rank[keep], grade[keep]
        num_ret = np.minimum(num_ret, max_depth)
    by_rank = np.lexsort((rank, hit_query))
    return Hits(query=hit_query[by_rank], rank=rank[by_rank], grade=grade[by_rank], num_ret=num_ret)


def _order_by_score(query: np.ndarray, scores: np.ndarray) -> np.ndarray | None:
    """A permutation grouping rows by query with scores descending, or None if already so."""
    if query.size < 2:
        return None
    changes = np.count_nonzero(query[1:] != query[:-1])
    distinct = np.count_nonzero(np.bincount(query))
    if changes + 1 == distinct and not np.any((scores[1:] > scores[:-1]) & (query[1:] == query[:-1])):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    # Arrow's stable sort needs no negated copy of the scores and beats np.lexsort on millions of rows.
    keys = pa.table({"query": query, "score": scores})
    order = pc.sort_indices(keys, sort_keys=[("query", "ascending"), ("score", "descending")])
    return order.to_numpy().astype(np.int32 if query.size < 2**31 else np.int64)


def _judged_positions(
    run: TrecTable,
    rows: np.ndarray | None,
    query: np.ndarray,
    qrels: TrecTable,
    qrels_query: np.ndarray,
    matters: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Positions (in ranked order) of rows judged with a grade that matters, and their grades."""
    qrels_rows = np.flatnonzero(matters & (qrels_query >= 0))
    if qrels_rows.size == 0 or query.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # Compare in the run's own key space: renumber the qrels rows' queries to the run's qid codes.
    run_code = {qid: code for code, qid in enumerate(run.qids)}
    to_run_code = np.asarray([run_code.get(qid, -1) for qid in qrels.qids], dtype=np.int64)
    qrels_rows = qrels_rows[to_run_code[qrels.qid_codes[qrels_rows]] >= 0]
    if qrels_rows.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    own = qrels.qid_codes[qrels_rows]
    qrels_keys = rekey(qrels.keys[qrels_rows], own, to_run_code[own])

    # A bitmap on the low key bits discards almost every unjudged row before any binary search;
    # the run's keys are scanned in blocks (in ranked order) so no full-size temporary is made.
    bits = int(min(max(qrels_keys.size * 16, 1 << 16), 1 << 26))
    bits = 1 << (bits - 1).bit_length()
    mask = np.uint64(bits - 1)
    bitmap = np.zeros(bits, dtype=bool)
    bitmap[(qrels_keys & mask).view(np.int64)] = True
    found_blocks = []
    for start in range(0, query.size, _BLOCK):
        block = run.keys[start : start + _BLOCK] if rows is None else run.keys[rows[start : start + _BLOCK]]
        found_blocks.append(np.flatnonzero(bitmap[(block & mask).view(np.int64)]) + start)
    candidates = np.concatenate(found_blocks)
    candidate_keys = run.keys[candidates if rows is None else rows[candidates]]

    by_key = np.argsort(qrels_keys, kind="stable")
    sorted_keys = qrels_keys[by_key]
    slot = np.minimum(np.searchsorted(sorted_keys, candidate_keys), sorted_keys.size - 1)
    found = sorted_keys[slot] == candidate_keys
    position = candidates[found]
    qrels_row = qrels_rows[by_key[slot[found]]]
    # Keys are only fingerprints: keep the pairs whose query and docid bytes really agree.
    same = _same_docids(run, position if rows is None else rows[position], qrels, qrels_row)
    same &= query[position] == qrels_query[qrels_row]
    return position[same].astype(np.int64), qrels.values[qrels_row[same]].astype(np.int64)


def _same_docids(run: TrecTable, run_rows: np.ndarray, qrels: TrecTable, qrels_rows: np.ndarray) -> np.ndarray:
    if run_rows.size == 0:
        return np.zeros(0, dtype=bool)
    import pyarrow.compute as pc

    left = run.docids.take(run_rows)
    right = qrels.docids.take(qrels_rows)
    return pc.equal(left, right).to_numpy(zero_copy_only=False).astype(bool)


def _break_ties(
    run: TrecTable,
    rows: np.ndarray | None,
    query: np.ndarray,
    scores: np.ndarray,
    position: np.ndarray,
    grade: np.ndarray,
) -> np.ndarray:
    """Move hits to their place under trec_eval's tie-breaking (docid descending, byte order).

    Only groups of equal (query, score) that hold a hit and another row of a different grade (or
    an unjudged row) are sorted; elsewhere the order inside a group changes no measure.
    """
    if position.size == 0:
        return position
    n = query.size
    before = np.maximum(position - 1, 0)
    after = np.minimum(position + 1, n - 1)
    tied = ((position > 0) & (query[before] == query[position]) & (scores[before] == scores[position])) | (
        (position < n - 1) & (query[after] == query[position]) & (scores[after] == scores[position])
    )
    if not np.any(tied):
        return position
    group_start_flags = np.empty(n, dtype=bool)
    group_start_flags[0] = True
    np.not_equal(query[1:], query[:-1], out=group_start_flags[1:])
    group_start_flags[1:] |= scores[1:] != scores[:-1]
    starts = np.flatnonzero(group_start_flags)
    del group_start_flags

    def ends(groups: np.ndarray) -> np.ndarray:
        following = groups + 1
        return np.where(following < starts.size, starts[np.minimum(following, starts.size - 1)], n)

    tied_hits = np.flatnonzero(tied)  # positions ascend, so their groups do too
    group = np.searchsorted(starts, position[tied_hits], side="right") - 1
    groups, first, hit_count = np.unique(group, return_index=True, return_counts=True)
    size = ends(groups) - starts[groups]
    lowest = np.minimum.reduceat(grade[tied_hits], first)
    highest = np.maximum.reduceat(grade[tied_hits], first)
    dirty = groups[(hit_count < size) | (lowest != highest)]
    if dirty.size == 0:
        return position

    lengths = ends(dirty) - starts[dirty]
    members = np.repeat(starts[dirty] - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
    member_group = np.repeat(np.arange(dirty.size), lengths)
    new_position = _sorted_by_docid(run, members if rows is None else rows[members], member_group, members)

    moved = position.copy()
    slot = np.minimum(np.searchsorted(members, position), members.size - 1)  # members ascend
    inside = members[slot] == position
    moved[inside] = new_position[slot[inside]]
    return moved


def _sorted_by_docid(run: TrecTable, run_rows: np.ndarray, group: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """For members listed group by group, the slot each takes when every group is sorted by docid descending."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.table({"group": pa.array(group), "docid": run.docids.take(run_rows)})
    order = pc.sort_indices(table, sort_keys=[("group", "ascending"), ("docid", "descending")]).to_numpy()
    new_slot = np.empty_like(slots)
    new_slot[order] = slots
    return new_slot
