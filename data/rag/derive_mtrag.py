"""Derive the RAG sample (corpus, questions with golden answers, qrels) from the MT-RAG benchmark files.

    python data/rag/derive_mtrag.py [--source MTRAG_FOLDER] [--out data/rag]

Corpus: every passage that appears as a context in ``conformance_477.jsonl`` or ``taskb_input.jsonl``
(deduplicated by document id). Questions: one per task of ``conformance_477.jsonl`` (the file holds each
task three times, once per model): the last user turn is the question, the reference answer (``target``)
the golden answer. Qrels: each task's contexts are its relevant passages (grade 1). Tasks without
contexts (UNANSWERABLE, CONVERSATIONAL) keep their question but have no judgments.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def passage(document_id: str, text: str, collection: str) -> dict:
    """A corpus record; the first line of an MT-RAG passage is its document title."""
    title = text.split("\n", 1)[0].strip()
    return {"id": document_id, "title": title, "text": text, "collection": collection}


def derive(source: Path) -> tuple[list[dict], list[dict], list[tuple[str, str, int]]]:
    """(corpus, questions, qrels triples) from the MT-RAG files in ``source``."""
    corpus: dict[str, dict] = {}
    questions: dict[str, dict] = {}
    qrels: list[tuple[str, str, int]] = []
    for row in read_jsonl(source / "conformance_477.jsonl"):
        for context in row["contexts"]:
            corpus.setdefault(
                context["document_id"], passage(context["document_id"], context["text"], row["collection"])
            )
        if row["task_id"] in questions:
            continue
        last_user = [turn["text"] for turn in row["input"] if turn["speaker"] == "user"][-1]
        questions[row["task_id"]] = {
            "id": row["task_id"],
            "question": last_user,
            "golden_answers": [row["target"]],
            "answerability": row["answerability"],
            "collection": row["collection"],
            "turns": len(row["input"]),
            "relevant_ids": [context["document_id"] for context in row["contexts"]],
        }
        qrels += [(row["task_id"], context["document_id"], 1) for context in row["contexts"]]
    for row in read_jsonl(source / "taskb_input.jsonl"):
        for context in row.get("contexts", []):
            corpus.setdefault(
                context["document_id"], passage(context["document_id"], context["text"], row["Collection"])
            )
    return sorted(corpus.values(), key=lambda p: p["id"]), list(questions.values()), qrels


def write(out: Path, corpus: list[dict], questions: list[dict], qrels: list[tuple[str, str, int]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("corpus.jsonl", corpus), ("questions.jsonl", questions)):
        with (out / name).open("w", encoding="utf-8", newline="\n") as handle:
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    with (out / "qrels.trec").open("w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(f"{qid} 0 {docid} {grade}\n" for qid, docid, grade in qrels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--source", type=Path, required=True, help="folder with conformance_477.jsonl and taskb_input.jsonl"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    corpus, questions, qrels = derive(args.source)
    write(args.out, corpus, questions, qrels)
    print(f"{len(corpus)} passages, {len(questions)} questions, {len(qrels)} judgments -> {args.out}")


if __name__ == "__main__":
    main()
