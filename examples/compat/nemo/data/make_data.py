"""Derive the tiny datasets of examples/compat/nemo/ from data/rag/ (MT-RAG sample, Apache-2.0).

Run from the project root: python examples/compat/nemo/data/make_data.py
Deterministic: the first answerable questions of data/rag/questions.jsonl whose relevant passages
are in the corpus, their passages, and the passages that follow them in corpus.jsonl as distractors.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
HERE = Path(__file__).resolve().parent
QUESTIONS, DISTRACTORS = 8, 16


def read(name: str) -> list[dict]:
    return [json.loads(line) for line in (ROOT / "data/rag" / name).read_text(encoding="utf-8").splitlines()]


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]


def main() -> None:
    corpus = {row["id"]: row for row in read("corpus.jsonl")}
    chosen = [
        q for q in read("questions.jsonl")
        if q["answerability"] == "ANSWERABLE" and q["turns"] == 1 and all(d in corpus for d in q["relevant_ids"])
    ][:QUESTIONS]  # fmt: skip
    relevant = list(dict.fromkeys(d for q in chosen for d in q["relevant_ids"]))
    others = [d for d in corpus if d not in relevant][:DISTRACTORS]
    beir = HERE / "beir"
    (beir / "qrels").mkdir(parents=True, exist_ok=True)
    docs = [{"_id": d, "title": corpus[d]["title"], "text": corpus[d]["text"]} for d in relevant + others]
    (beir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    queries = [{"_id": f"q{i}", "text": q["question"]} for i, q in enumerate(chosen, start=1)]
    (beir / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    qrels = ["query-id\tcorpus-id\tscore\n"]
    qrels += [f"q{i}\t{d}\t1\n" for i, q in enumerate(chosen, start=1) for d in q["relevant_ids"]]
    (beir / "qrels" / "test.tsv").write_text("".join(qrels), encoding="utf-8")
    # SQuAD: one paragraph per question (its first relevant passage), the golden answer as the answer text
    articles = [
        {
            "title": corpus[q["relevant_ids"][0]]["title"],
            "paragraphs": [
                {
                    "context": corpus[q["relevant_ids"][0]]["text"],
                    "qas": [{"id": f"s{i}", "question": q["question"],
                             "answers": [{"text": q["golden_answers"][0], "answer_start": -1}]}],
                }
            ],
        }
        for i, q in enumerate(chosen, start=1)
    ]  # fmt: skip
    (HERE / "squad.json").write_text(json.dumps({"version": "v2.0", "data": articles}, indent=1), encoding="utf-8")
    # RAGAS (column lists): pre-generated answers = the golden answer's first sentence
    ragas = {
        "question": [q["question"] for q in chosen],
        "contexts": [[corpus[d]["text"] for d in q["relevant_ids"]] for q in chosen],
        "answer": [first_sentence(q["golden_answers"][0]) for q in chosen],
        "ground_truths": [q["golden_answers"] for q in chosen],
    }
    (HERE / "ragas.json").write_text(json.dumps(ragas, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
