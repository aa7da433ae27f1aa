"""A small RAG system over data/rag, to evaluate as a target (examples/eval_target_python.yaml, and served
over HTTP by rag_service.py for examples/eval_target_http.yaml). Offline and deterministic.

Retrieval scores each passage by the idf-weighted overlap of its words with the question (the previous
question of the conversation counts half); the answer is the top passages' sentences that share the most
words with the question. It is a stand-in for your own system, not a good one.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "data" / "rag" / "corpus.jsonl"
TOP_K = 5
_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = (
    "a an and are as at be by can do does for from how i in is it my of "
    "on or that the this to was what when where which who why will with you your"
)
_STOP = frozenset(_STOP_WORDS.split())


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


@lru_cache(maxsize=1)
def index() -> tuple[list[dict], list[Counter], dict[str, float]]:
    passages = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    bags = [Counter(words(f"{p.get('title', '')} {p['text']}")) for p in passages]
    frequency = Counter(word for bag in bags for word in bag)
    idf = {word: math.log(1 + len(bags) / n) for word, n in frequency.items()}
    return passages, bags, idf


def retrieve(question: str, previous: str = "", top_k: int = TOP_K) -> list[dict]:
    """The ``top_k`` passages by weighted overlap, as {text, id, score}; ties broken by id."""
    passages, bags, idf = index()
    query = Counter(words(question))
    for word in words(previous):
        query[word] += 0.5
    scored = []
    for passage, bag in zip(passages, bags, strict=False):
        score = sum(weight * idf.get(word, 0.0) for word, weight in query.items() if word in bag)
        if score > 0:
            scored.append((-score, passage["id"], passage))
    scored.sort(key=lambda entry: (entry[0], entry[1]))
    return [{"text": p["text"], "id": p["id"], "score": round(-s, 4)} for s, _, p in scored[:top_k]]


def answer_from(question: str, contexts: list[dict]) -> str:
    """The two sentences of the passages that share the most words with the question, in passage order."""
    wanted = set(words(question))
    sentences = [s.strip() for c in contexts for s in re.split(r"(?<=[.!?])\s+|\n+", c["text"]) if len(s.split()) > 3]
    sentences = list(dict.fromkeys(sentences))
    ranked = sorted(range(len(sentences)), key=lambda i: (-len(wanted & set(words(sentences[i]))), i))[:2]
    return " ".join(sentences[i] for i in sorted(ranked)) or "I do not know."


def answer(request: dict) -> dict:
    """The target function: ``{question, id, history, settings}`` -> ``{answer, contexts}``."""
    history = request.get("history") or []
    previous = next((t["content"] for t in reversed(history) if t.get("role") == "user"), "")
    top_k = int((request.get("settings") or {}).get("top_k", TOP_K))
    contexts = retrieve(request["question"], previous, top_k)
    return {"answer": answer_from(request["question"], contexts), "contexts": contexts}
