"""Rebuild the UMBRELA sample in this folder from the MT-RAG human-evaluation subset.

    python data/umbrela/make_sample.py [path/to/reference_subset_with_human_evaluations.json]

Deterministic: the same input gives byte-identical files. See README.md for what each file is.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[2] / "shared" / "mtrag" / "reference_subset_with_human_evaluations.json"
RUN_DEPTH = 20
POOL_DEPTH = 10
RELEVANT = 2  # MT-RAG's binary "relevant" written as UMBRELA grade 2 (the lowest grade counted relevant)
STOP = {
    *[
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "my",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
    ],
    *["to", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your"],
}


def tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP]


def bm25(
    queries: dict[str, str], docs: dict[str, str], k1: float = 0.9, b: float = 0.4
) -> dict[str, list[tuple[str, float]]]:
    doc_tokens = {d: Counter(tokens(t)) for d, t in docs.items()}
    lengths = {d: sum(c.values()) for d, c in doc_tokens.items()}
    avg = sum(lengths.values()) / len(lengths)
    df = Counter(term for c in doc_tokens.values() for term in c)
    n = len(docs)
    run = {}
    for qid, query in queries.items():
        scores = {}
        for d, counts in doc_tokens.items():
            s = 0.0
            for term in set(tokens(query)):
                if term in counts:
                    idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                    tf = counts[term]
                    s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[d] / avg))
            if s > 0:
                scores[d] = s
        run[qid] = ranked(scores)
    return run


def tfidf(queries: dict[str, str], docs: dict[str, str]) -> dict[str, list[tuple[str, float]]]:
    doc_tokens = {d: Counter(tokens(t)) for d, t in docs.items()}
    df = Counter(term for c in doc_tokens.values() for term in c)
    n = len(docs)

    def vector(counts: Counter) -> dict[str, float]:
        v = {t: (1 + math.log(c)) * math.log(n / df[t]) for t, c in counts.items() if df.get(t)}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    doc_vectors = {d: vector(c) for d, c in doc_tokens.items()}
    run = {}
    for qid, query in queries.items():
        q = vector(Counter(tokens(query)))
        scores = {d: sum(w * v.get(t, 0.0) for t, w in q.items()) for d, v in doc_vectors.items()}
        run[qid] = ranked({d: s for d, s in scores.items() if s > 0})
    return run


def ranked(scores: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda item: (-round(item[1], 6), item[0]))[:RUN_DEPTH]


def write_run(path: Path, run: dict[str, list[tuple[str, float]]], tag: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for qid, items in run.items():
            for rank, (docid, score) in enumerate(items, start=1):
                handle.write(f"{qid} Q0 {docid} {rank} {score:.6f} {tag}\n")


def main(source: Path) -> None:
    data = json.loads(source.read_text(encoding="utf-8"))
    documents = {d["document_id"]: d for d in data["documents"]}
    queries, relevant = {}, {}
    for task in data["tasks"]:
        if len(task["input"]) != 1 or not task["contexts"]:
            continue  # first turns only (self-contained questions) with at least one relevant passage
        qid = task["task_id"].split("<::>")[0][:12]
        queries[qid] = task["input"][0]["text"].strip()
        relevant[qid] = [c["document_id"] for c in task["contexts"]]
    corpus = {d: (doc.get("title") or "") + "\n" + doc["text"] for d, doc in sorted(documents.items())}
    with open(HERE / "queries.jsonl", "w", encoding="utf-8", newline="\n") as handle:
        for qid, text in queries.items():
            handle.write(json.dumps({"qid": qid, "query": text}, ensure_ascii=False) + "\n")
    with open(HERE / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as handle:
        for docid, doc in sorted(documents.items()):
            row = {"docid": docid, "title": doc.get("title") or "", "text": doc["text"]}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    titles = {d: doc.get("title") or "" for d, doc in documents.items()}
    runs = {
        "bm25": bm25(queries, corpus),
        "tfidf": tfidf(queries, corpus),
        "title": bm25(queries, titles),
    }
    for name, run in runs.items():
        write_run(HERE / f"run.{name}.trec", run, name)
    write_qrels(HERE / "qrels.human.txt", runs, relevant, POOL_DEPTH, every_relevant=True)
    # examples/fill_qrels.yaml offline: qrels pooled from the weak title run alone (the other runs' documents are
    # holes), and the annotators' grades of every passage in any run's top 20 (the holes' recorded grades)
    write_qrels(HERE / "qrels.title_pool.txt", {"title": runs["title"]}, relevant, POOL_DEPTH, every_relevant=False)
    write_qrels(HERE / "qrels.annotated20.txt", runs, relevant, RUN_DEPTH, every_relevant=False)


def write_qrels(
    path: Path,
    runs: dict[str, dict[str, list[tuple[str, float]]]],
    relevant: dict[str, list[str]],
    depth: int,
    *,
    every_relevant: bool,
) -> None:
    """The annotators' grades of every passage in some run's top ``depth`` (relevant: RELEVANT, else 0), and with
    ``every_relevant`` also of the relevant passages no run ranks that high."""
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for qid, docids in relevant.items():
            pool = {d for run in runs.values() for d, _ in run[qid][:depth]}
            for docid in docids:
                if every_relevant or docid in pool:
                    handle.write(f"{qid} 0 {docid} {RELEVANT}\n")
            for docid in sorted(pool - set(docids)):
                handle.write(f"{qid} 0 {docid} 0\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE)
