"""The holes of a pool: (query, document) pairs in some run's top k that the qrels do not judge, and which of
them to judge within a budget, spread evenly over queries and runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Qrels = Mapping[str, Mapping[str, int]]
Ranked = Mapping[str, Mapping[str, Sequence[str]]]  # {run: {qid: [docid, ...] in rank order}}


def find_holes(qrels: Qrels, ranked: Ranked, depth: int) -> list[tuple[str, str]]:
    """Every unjudged (qid, docid) in the top ``depth`` of some run, for the queries the qrels judge
    (trec_eval evaluates no other); each pair once, in the order ``choose`` visits them."""
    return choose(qrels, ranked, depth, budget=None)


def choose(qrels: Qrels, ranked: Ranked, depth: int, *, budget: int | None) -> list[tuple[str, str]]:
    """The holes to judge, at most ``budget`` (None: all), taken round-robin: rank 1 of every query of every
    run, then rank 2, and so on; queries in sorted order, runs in the order given. So a budget is spread
    evenly over queries and runs, and the top ranks, which weigh most in every measure, come first."""
    chosen: dict[tuple[str, str], None] = {}
    queries = sorted(qrels)
    for rank in range(depth):
        for qid in queries:
            for run in ranked.values():
                docids = run.get(qid, ())
                pair = (qid, docids[rank]) if rank < len(docids) else None
                if pair is None or pair[1] in qrels[qid] or pair in chosen:
                    continue
                if budget is not None and len(chosen) >= budget:
                    return list(chosen)
                chosen[pair] = None
    return list(chosen)
