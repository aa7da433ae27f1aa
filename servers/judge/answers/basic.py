"""Answer judges: IDK (no-answer), citation support and the RAD-Bench 1-10 rating, one item at a time.

Each judge returns the item's status (ok / parse_error with the raw reply / error with the reason / a
judge-specific "nothing to judge" status) and its values; ``registry`` declares them as tools.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from servers.judge.answers.common import SENTENCE, ask_prompt, status_fields
from servers.judge.common.asking import Unreadable, ask, last_json
from servers.judge.common.parsing import parse_grade
from servers.judge.common.prompting import load_prompt
from ultra_llm.client import LLMClient

IDK_VALUES = {"yes": 1.0, "partial": 0.5, "no": 0.0}
SUPPORT_VALUES = {"full": 1.0, "partial": 0.5, "none": 0.0}
_CITE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.!?,;:])")


def split_citations(answer: str) -> list[tuple[str, list[int]]]:
    """The answer's sentences, each with the passage numbers it cites (``[1]``, ``[1, 2]``, ``[1][3]``).

    Markers written just after a sentence's full stop belong to that sentence. The sentence text is
    returned without its markers. Abbreviations such as "e.g." end a sentence (a known limitation).
    """
    sentences: list[tuple[str, list[int]]] = []
    for match in SENTENCE.finditer(answer.strip()):
        piece = match.group(0)
        numbers = [int(n) for group in _CITE.findall(piece) for n in group.split(",")]
        text = _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(_CITE.sub(" ", piece).split()))
        if text:
            sentences.append((text, numbers))
    return [(text, list(dict.fromkeys(numbers))) for text, numbers in sentences]


def citation_scores(labels: Sequence[Sequence[float]]) -> dict[str, float | None]:
    """Precision = mean over all citations; recall = mean over sentences of the best support among the
    sentence's citations (an uncited sentence scores 0); F1 of the two (0 when both are 0).
    No citation at all: precision None, recall 0 and F1 0. No sentence: everything None."""
    if not labels:
        return {"citation_precision": None, "citation_recall": None, "citation_f1": None}
    every = [value for sentence in labels for value in sentence]
    precision = sum(every) / len(every) if every else None
    recall = sum(max(sentence, default=0.0) for sentence in labels) / len(labels)
    f1 = 0.0 if precision is None or precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return {"citation_precision": precision, "citation_recall": recall, "citation_f1": f1}


def _read_idk(text: str) -> dict[str, Any]:
    data = last_json(text, dict)
    attempted = str(data.get("attempted", "")).strip().lower()
    idk = str(data.get("idk", "")).strip().lower()
    if attempted not in ("yes", "no") or idk not in IDK_VALUES:
        raise Unreadable('expected {"attempted": "yes"|"no", "idk": "yes"|"partial"|"no"}')
    return {"idk": IDK_VALUES[idk], "answer_attempted": 1.0 if attempted == "yes" else 0.0, "idk_label": idk}


def _read_support(text: str) -> str:
    data = last_json(text, dict)
    label = str(data.get("support", "")).strip().lower()
    if label not in SUPPORT_VALUES:
        raise Unreadable('expected {"support": "full"|"partial"|"none"}')
    return label


def _read_rating(text: str) -> int:
    parsed = parse_grade(text, low=1, high=10)
    if parsed.score is None:
        raise Unreadable(parsed.how)
    return parsed.score


async def judge_idk(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    answer = await ask_prompt(
        client, "idk_v1", retries, _read_idk,
        'Reply with one JSON object: {"attempted": "yes" or "no", "idk": "yes", "partial" or "no"}.',
        question=item["question"], answer=item["answer"],
    )  # fmt: skip
    return {**status_fields(answer), **(answer.value or {})}


async def judge_rag(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    passages = "\n".join(f"[{i}] {p}" for i, p in enumerate(item["passages"], start=1)) or "(none)"
    answer = await ask_prompt(
        client, "rag_judge_v1", retries, _read_rating,
        "Reply with a single line and nothing else: ##final score: N, where N is a whole number from 1 to 10.",
        question=item["question"], passages=passages, reference=item["reference"], answer=item["answer"],
    )  # fmt: skip
    result = status_fields(answer)
    if answer.status == "ok":
        result.update(rating=answer.value, rag_score=answer.value / 10)
    return result


async def judge_citations(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    prompt = load_prompt("citation_v1")
    sentences = split_citations(item["answer"])
    passages = item["passages"]
    if not sentences:
        return {"status": "no_sentences", "requests": 0, "sentences": [], **citation_scores([])}

    async def one(sentence: str, number: int) -> dict[str, Any]:
        if not 1 <= number <= len(passages):  # a citation of a passage that was not given supports nothing
            return {"passage": number, "label": "none", "status": "invalid_citation", "requests": 0}
        answer = await ask(
            client,
            prompt.render(question=item["question"], sentence=sentence, passage=passages[number - 1]),
            read=_read_support,
            repair='Reply with one JSON object: {"support": "full", "partial" or "none"}.',
            version=prompt.version,
            max_retries=retries,
        )
        return {"passage": number, "label": answer.value, **status_fields(answer)}

    judged = await asyncio.gather(*(asyncio.gather(*(one(s, n) for n in numbers)) for s, numbers in sentences))
    flat = [c for sentence in judged for c in sentence]
    broken = [c for c in flat if c["status"] in ("parse_error", "error")]
    failed = len(broken)
    values = [[SUPPORT_VALUES[c["label"]] for c in sentence if c["label"] is not None] for sentence in judged]
    if not failed:
        status = "ok"
    elif failed == sum(c["status"] != "invalid_citation" for c in flat):  # no request came back usable
        status = "error" if any(c["status"] == "error" for c in broken) else "parse_error"
    else:
        status = "incomplete"
    return {
        "status": status,
        **({"error": broken[0]["error"]} if broken else {}),
        "requests": sum(c["requests"] for c in flat),
        "failed_citations": failed,
        "invalid_citations": sum(c["status"] == "invalid_citation" for c in flat),
        "num_citations": len(flat),
        "sentences": [
            {"text": text, "citations": list(citations)} for (text, _), citations in zip(sentences, judged, strict=True)
        ],
        **citation_scores(values),
    }
