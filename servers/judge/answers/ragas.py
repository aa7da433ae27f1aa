"""RAGAS-style judges: faithfulness, answer relevancy, context precision, context recall, answer correctness.

Definitions (docs/judges.md): faithfulness = supported statements / statements (2 requests); answer
relevancy = mean cosine between the question and 3 questions generated from the answer, 0 when the
answer is noncommittal (1 chat + 1 embeddings request); context precision = average precision of the
per-context usefulness verdicts (1 request); context recall = share of reference sentences attributable
to the contexts (1 request); answer correctness = 0.75 * F1(TP, FP, FN claims) + 0.25 * cosine(answer,
reference) (1 chat + 1 embeddings request). Nothing without a value is given one: the status says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from servers.judge.answers.common import SENTENCE, ask_prompt, numbered, status_fields
from servers.judge.answers.common import string_list as _strings
from servers.judge.common.asking import Unreadable, last_json
from ultra_llm.client import LLMClient

CORRECTNESS_WEIGHTS = (0.75, 0.25)
NUM_QUESTIONS = 3


def _verdicts(text: str, length: int) -> list[int]:
    values = last_json(text, list)
    if len(values) != length:
        raise Unreadable(f"expected a list of {length} verdicts, got {len(values)}")
    if any(v not in (0, 1) or isinstance(v, bool) for v in values):
        raise Unreadable("every verdict must be 1 or 0")
    return [int(v) for v in values]


def sentences_of(text: str) -> list[str]:
    return [m.group(0).strip() for m in SENTENCE.finditer(text.strip()) if m.group(0).strip()]


def average_precision(verdicts: Sequence[int]) -> float:
    """Mean of P@k over the ranks k with a useful context; 0 when none is useful."""
    hits, total = 0, 0.0
    for k, useful in enumerate(verdicts, start=1):
        if useful:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def correctness_f1(tp: int, fp: int, fn: int) -> float | None:
    """TP / (TP + 0.5 (FP + FN)) as RAGAS; None when there is no claim at all."""
    return tp / (tp + 0.5 * (fp + fn)) if tp + fp + fn else None


async def _embed(client: LLMClient, texts: list[str]) -> tuple[list[list[float]] | None, dict[str, Any]]:
    reply = await client.embed(texts)
    if reply.status != "ok" or not reply.vectors:
        return None, {"status": "error", "error": f"embeddings: {reply.error}"}
    return reply.vectors, {}


async def judge_faithfulness(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    split = await ask_prompt(
        client, "faithfulness_statements_v1", retries, lambda t: _strings(last_json(t, dict), "statements"),
        'Reply with one JSON object: {"statements": [...]}.', question=item["question"], answer=item["answer"],
    )  # fmt: skip
    if split.status != "ok":
        return status_fields(split)
    statements = split.value
    if not statements:
        return {"status": "no_statements", "requests": split.requests, "faithfulness": None, "statements": []}
    check = await ask_prompt(
        client, "faithfulness_verdicts_v1", retries, lambda t: _verdicts(t, len(statements)),
        f"Reply with a JSON array of exactly {len(statements)} numbers, each 1 or 0.", reply_length=len(statements),
        count=str(len(statements)), passages=numbered(item["passages"]), statements=numbered(statements),
    )  # fmt: skip
    result = {**status_fields(check), "requests": split.requests + check.requests, "statements": statements}
    if check.status == "ok":
        result.update(verdicts=check.value, faithfulness=sum(check.value) / len(statements))
    return result


async def judge_context_precision(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    contexts = item["passages"]
    if not contexts:
        return {"status": "no_contexts", "requests": 0, "context_precision": None}
    answer = await ask_prompt(
        client, "context_precision_v1", retries, lambda t: _verdicts(t, len(contexts)),
        f"Reply with a JSON array of exactly {len(contexts)} numbers, each 1 or 0.", reply_length=len(contexts),
        question=item["question"], reference=item["reference"], count=str(len(contexts)), passages=numbered(contexts),
    )  # fmt: skip
    result = status_fields(answer)
    if answer.status == "ok":
        result.update(verdicts=answer.value, context_precision=average_precision(answer.value))
    return result


async def judge_context_recall(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    sentences = sentences_of(item["reference"])
    if not sentences:
        return {"status": "no_reference", "requests": 0, "context_recall": None}
    answer = await ask_prompt(
        client, "context_recall_v1", retries, lambda t: _verdicts(t, len(sentences)),
        f"Reply with a JSON array of exactly {len(sentences)} numbers, each 1 or 0.", reply_length=len(sentences),
        question=item["question"], passages=numbered(item["passages"]), count=str(len(sentences)),
        sentences=numbered(sentences),
    )  # fmt: skip
    result = status_fields(answer)
    if answer.status == "ok":
        result.update(verdicts=answer.value, context_recall=sum(answer.value) / len(sentences))
    return result


def _read_questions(text: str) -> dict[str, Any]:
    data = last_json(text, dict)
    questions = _strings(data, "questions")
    if len(questions) != NUM_QUESTIONS or data.get("noncommittal") not in (0, 1):
        raise Unreadable(f'expected {NUM_QUESTIONS} questions and "noncommittal": 1 or 0')
    return {"questions": questions, "noncommittal": int(data["noncommittal"])}


async def judge_answer_relevancy(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    answer = await ask_prompt(
        client, "answer_relevancy_v1", retries, _read_questions,
        f'Reply with one JSON object: {{"questions": [{NUM_QUESTIONS} strings], "noncommittal": 1 or 0}}.',
        answer=item["answer"],
    )  # fmt: skip
    result = status_fields(answer)
    if answer.status != "ok":
        return result
    result.update(answer.value)
    if answer.value["noncommittal"]:
        return {**result, "answer_relevancy": 0.0}
    vectors, failure = await _embed(client, [item["question"], *answer.value["questions"]])
    if vectors is None:
        return {**result, **failure}
    similarities = [cosine(vectors[0], v) for v in vectors[1:]]
    return {**result, "answer_relevancy": sum(similarities) / len(similarities)}


async def judge_answer_correctness(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    def read(text: str) -> dict[str, list[str]]:
        data = last_json(text, dict)
        return {key: _strings(data, key) for key in ("TP", "FP", "FN")}

    answer = await ask_prompt(
        client, "answer_correctness_v1", retries, read,
        'Reply with one JSON object: {"TP": [...], "FP": [...], "FN": [...]}.',
        question=item["question"], answer=item["answer"], reference=item["reference"],
    )  # fmt: skip
    result = status_fields(answer)
    if answer.status != "ok":
        return result
    claims = answer.value
    f1 = correctness_f1(len(claims["TP"]), len(claims["FP"]), len(claims["FN"]))
    if f1 is None:
        return {**result, "status": "no_claims", "claims": claims, "answer_correctness": None}
    vectors, failure = await _embed(client, [item["answer"], item["reference"]])
    if vectors is None:
        return {**result, **failure, "claims": claims, "f1": f1}
    similarity = cosine(vectors[0], vectors[1])
    score = CORRECTNESS_WEIGHTS[0] * f1 + CORRECTNESS_WEIGHTS[1] * similarity
    return {**result, "claims": claims, "f1": f1, "similarity": similarity, "answer_correctness": score}
