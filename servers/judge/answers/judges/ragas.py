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

from servers.judge.answers.common import SENTENCE, numbered, status_fields
from servers.judge.answers.declare import answer_judge
from servers.judge.common.asking import Prompts, Reply, ask
from ultra_llm.client import LLMClient
from ultra_llm.replies import array, choice, text

CORRECTNESS_WEIGHTS = (0.75, 0.25)
NUM_QUESTIONS = 3
STATEMENTS = Reply.of(statements=array(text()))
# a verdict per statement (context, sentence): the list, in an object as strict mode wants, sized when asked
VERDICTS = Reply.of(verdicts=array(choice(0, 1)), listed=True)
QUESTIONS = Reply.of(
    questions={**array(text()), "minItems": NUM_QUESTIONS, "maxItems": NUM_QUESTIONS}, noncommittal=choice(0, 1)
)
CLAIM_CLASSES = Reply.of(TP=array(text()), FP=array(text()), FN=array(text()))


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


@answer_judge(
    name="faithfulness",
    inputs=("q_ls", "pred_ls", "ret_psg"),
    metrics=("faithfulness",),
    requests="2",
    replies={"faithfulness_statements_v1": STATEMENTS, "faithfulness_verdicts_v1": VERDICTS},
    description="Faithfulness (RAGAS): the answer split into self-contained statements, each verified against "
    "the passages; score = supported / statements.\n"
    "No statements: no score (status no_statements). 2 requests per answer.",
)
async def judge_faithfulness(client: LLMClient, prompts: Prompts, item: dict[str, Any], retries: int) -> dict[str, Any]:
    split = await ask(
        client, prompts, "faithfulness_statements_v1", STATEMENTS, max_retries=retries, question=item["question"],
        answer=item["answer"],
    )  # fmt: skip
    if split.status != "ok":
        return status_fields(split)
    statements = split.value["statements"]
    if not statements:
        return {"status": "no_statements", "requests": split.requests, "faithfulness": None, "statements": []}
    check = await ask(
        client, prompts, "faithfulness_verdicts_v1", VERDICTS, max_retries=retries, length=len(statements),
        count=str(len(statements)), passages=numbered(item["passages"]), statements=numbered(statements),
    )  # fmt: skip
    result = {**status_fields(check), "requests": split.requests + check.requests, "statements": statements}
    if check.status == "ok":
        result.update(verdicts=check.value, faithfulness=sum(check.value) / len(statements))
    return result


@answer_judge(
    name="answer_relevancy",
    inputs=("q_ls", "pred_ls"),
    metrics=("answer_relevancy",),
    requests="1 chat + 1 embeddings",
    replies={"answer_relevancy_v1": QUESTIONS},
    description="Answer relevancy (RAGAS): 3 questions generated from the answer alone; score = mean cosine "
    "between the question and each generated one (judge_llm.embedding_model), 0 if the answer is "
    "noncommittal.\n1 chat + 1 embeddings request per answer.",
)
async def judge_answer_relevancy(
    client: LLMClient, prompts: Prompts, item: dict[str, Any], retries: int
) -> dict[str, Any]:
    answer = await ask(client, prompts, "answer_relevancy_v1", QUESTIONS, max_retries=retries, answer=item["answer"])
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


@answer_judge(
    name="context_precision",
    inputs=("q_ls", "gt_ls", "ret_psg"),
    metrics=("context_precision",),
    requests="1",
    replies={"context_precision_v1": VERDICTS},
    description="Context precision (RAGAS): a usefulness verdict per ranked passage (towards the reference "
    "answer), then average precision over the verdicts (0 when none is useful). 1 request per question.",
)
async def judge_context_precision(
    client: LLMClient, prompts: Prompts, item: dict[str, Any], retries: int
) -> dict[str, Any]:
    contexts = item["passages"]
    if not contexts:
        return {"status": "no_contexts", "requests": 0, "context_precision": None}
    answer = await ask(
        client, prompts, "context_precision_v1", VERDICTS, max_retries=retries, length=len(contexts),
        question=item["question"], reference=item["reference"], count=str(len(contexts)), passages=numbered(contexts),
    )  # fmt: skip
    result = status_fields(answer)
    if answer.status == "ok":
        result.update(verdicts=answer.value, context_precision=average_precision(answer.value))
    return result


@answer_judge(
    name="context_recall",
    inputs=("q_ls", "gt_ls", "ret_psg"),
    metrics=("context_recall",),
    requests="1",
    replies={"context_recall_v1": VERDICTS},
    description="Context recall (RAGAS): share of the reference answer's sentences attributable to the "
    "passages. 1 request per question.",
)
async def judge_context_recall(
    client: LLMClient, prompts: Prompts, item: dict[str, Any], retries: int
) -> dict[str, Any]:
    sentences = sentences_of(item["reference"])
    if not sentences:
        return {"status": "no_reference", "requests": 0, "context_recall": None}
    answer = await ask(
        client, prompts, "context_recall_v1", VERDICTS, max_retries=retries, length=len(sentences),
        question=item["question"], passages=numbered(item["passages"]), count=str(len(sentences)),
        sentences=numbered(sentences),
    )  # fmt: skip
    result = status_fields(answer)
    if answer.status == "ok":
        result.update(verdicts=answer.value, context_recall=sum(answer.value) / len(sentences))
    return result


@answer_judge(
    name="answer_correctness",
    inputs=("q_ls", "pred_ls", "gt_ls"),
    metrics=("answer_correctness",),
    requests="1 chat + 1 embeddings",
    replies={"answer_correctness_v1": CLAIM_CLASSES},
    description="Answer correctness (RAGAS): claims classified TP / FP / FN against the reference, "
    "F1 = TP / (TP + 0.5 (FP + FN)), combined 0.75 * F1 + 0.25 * cosine(answer, reference).\n"
    "1 chat + 1 embeddings request per answer.",
)
async def judge_answer_correctness(
    client: LLMClient, prompts: Prompts, item: dict[str, Any], retries: int
) -> dict[str, Any]:
    answer = await ask(
        client, prompts, "answer_correctness_v1", CLAIM_CLASSES, max_retries=retries, question=item["question"],
        answer=item["answer"], reference=item["reference"],
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
