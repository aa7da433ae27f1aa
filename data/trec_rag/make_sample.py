"""Build ``answers.jsonl`` for ``examples/trec_rag.yaml``: the sample answers with citation markers.

    python data/trec_rag/make_sample.py

Deterministic: the same input files give a byte-identical output. Inputs (all in this repository):
``data/nuggets/answers.jsonl`` (GPT-4o's MT-RAG answers and the MT-RAG references, two runs per query),
``data/umbrela/queries.jsonl``, ``data/umbrela/run.bm25.trec`` and ``data/umbrela/corpus.jsonl``.

Each answer is paired with the top ``DEPTH`` BM25 passages of its query (the passages UMBRELA judges in
the example) and every sentence gets a marker ``[k]`` for the passage k (1-based, in rank order) that
shares the most content words with it, when it shares at least ``MIN_OVERLAP``. The markers are ours,
added lexically: MT-RAG's answers carry no citations.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
DEPTH = 5
MIN_OVERLAP = 3
_WORD = re.compile(r"[a-z0-9]+")
# a sentence ends at . ! or ? followed by whitespace or the end of the text
_END = re.compile(r"(?<=[.!?])(?=\s|$)")
STOP = set(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "could",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "there",
        "these",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
    ]
)


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP and len(w) > 2}


def cite(answer: str, passages: list[str]) -> str:
    """The answer with `` [k]`` after each sentence's end for its best-overlapping passage."""
    bags = [words(p) for p in passages]
    out, start = [], 0
    for match in [*_END.finditer(answer)]:
        sentence = answer[start : match.end()]
        overlaps = [len(words(sentence) & bag) for bag in bags]
        best = max(range(len(bags)), key=lambda i: (overlaps[i], -i)) if bags else None
        out.append(sentence + (f" [{best + 1}]" if best is not None and overlaps[best] >= MIN_OVERLAP else ""))
        start = match.end()
    out.append(answer[start:])
    return "".join(out)


def main() -> None:
    queries = {r["qid"]: r["query"] for r in map(json.loads, (DATA / "umbrela" / "queries.jsonl").open())}
    corpus = {r["docid"]: r["text"] for r in map(json.loads, (DATA / "umbrela" / "corpus.jsonl").open())}
    ranked: dict[str, list[tuple[int, str]]] = {}
    for line in (DATA / "umbrela" / "run.bm25.trec").open():
        qid, _, docid, rank, *_ = line.split()
        ranked.setdefault(qid, []).append((int(rank), docid))
    rows = []
    for answer in map(json.loads, (DATA / "nuggets" / "answers.jsonl").open()):
        qid = answer["qid"]
        passages = [corpus[docid] for _, docid in sorted(ranked[qid])[:DEPTH]]
        rows.append(
            {
                "id": f"{qid}/{answer['run']}",
                "qid": qid,
                "run": answer["run"],
                "question": queries[qid],
                "answer": cite(answer["answer"], passages),
                "passages": passages,
            }
        )
    with (HERE / "answers.jsonl").open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
