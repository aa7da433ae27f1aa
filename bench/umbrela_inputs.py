"""UMBRELA inputs for the judge benches: queries, a corpus and a run written as the ``umbrela_judge`` tool reads
them (file mode), so a bench calls the tool as a user does."""

from __future__ import annotations

import json
from pathlib import Path


def write_pairs(n: int, folder: Path, *, per_query: int, query: str, passage: str) -> dict[str, str]:
    """``n`` distinct (query, passage) pairs, ``per_query`` passages per query (``query`` and ``passage`` are
    formats of ``q``, the query's number, and ``i``, the passage's): the tool's settings {setting: path}."""
    folder.mkdir(parents=True, exist_ok=True)
    count = (n + per_query - 1) // per_query
    queries = [{"qid": f"q{q}", "query": query.format(q=q)} for q in range(count)]
    corpus = [{"docid": f"d{i}", "text": passage.format(i=i, q=i // per_query)} for i in range(n)]
    run = [f"q{i // per_query} Q0 d{i} {i % per_query + 1} {per_query - i % per_query} bench\n" for i in range(n)]
    paths = {
        "queries_path": folder / "queries.jsonl",
        "corpus_path": folder / "corpus.jsonl",
        "run_path": folder / "run.trec",
    }
    paths["queries_path"].write_text("".join(json.dumps(row) + "\n" for row in queries), encoding="utf-8")
    paths["corpus_path"].write_text("".join(json.dumps(row) + "\n" for row in corpus), encoding="utf-8")
    paths["run_path"].write_text("".join(run), encoding="utf-8")
    return {name: str(path) for name, path in paths.items()}
