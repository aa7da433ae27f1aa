"""Golden-answer judge: factual correctness of an answer against a reference answer, claim by claim.

Claims are extracted from the answer and from the reference (one request each, the same prompt, so a
reference's claims are cached across answers), then each side's claims are checked against the other
text as entailment / contradiction / neutral (one request per side). precision = answer claims entailed
by the reference / answer claims; recall = reference claims entailed by the answer / reference claims;
F1 their harmonic mean (0 when both are 0). A side without claims leaves the item unscored
(``no_answer_claims`` / ``no_reference_claims``); an unreadable or failed request fails the item.
"""

from __future__ import annotations

import asyncio
from typing import Any

from servers.judge.answers.common import numbered, status_fields
from servers.judge.answers.declare import answer_judge
from servers.judge.common.asking import Answer, Prompts, Reply, ask
from ultra_llm.client import LLMClient
from ultra_llm.replies import array, choice, text

VERDICTS = ("entailment", "contradiction", "neutral")
CLAIMS = Reply.of(claims=array(text()))
# a verdict per claim: the list, in an object as strict mode wants; the reader takes the list inside
CLAIM_VERDICTS = Reply.of(verdicts=array(choice(*VERDICTS)), listed=True)


async def _claims(client: LLMClient, prompts: Prompts, text: str, retries: int) -> Answer:
    answer = await ask(client, prompts, "claims_v1", CLAIMS, max_retries=retries, text=text)
    if answer.status == "ok":
        answer.value = answer.value["claims"]
    return answer


async def _verdicts(client: LLMClient, prompts: Prompts, premise: str, claims: list[str], retries: int) -> Answer:
    count = len(claims)
    return await ask(
        client, prompts, "claim_verdicts_v1", CLAIM_VERDICTS, max_retries=retries, length=count, premise=premise,
        count=str(count), claims=numbered(claims),
    )  # fmt: skip


def _combined(answers: list[Answer]) -> dict[str, Any]:
    """The status of several requests: ok when all are; else the first failure (an error before a parse_error)."""
    requests = sum(a.requests for a in answers)
    cached = all(a.cached for a in answers)
    failed = [a for a in answers if a.status != "ok"]
    if not failed:
        return {"status": "ok", "requests": requests, "cached": cached}
    first = next((a for a in failed if a.status == "error"), failed[0])
    return {**status_fields(first), "requests": requests, "cached": cached}


def factual_scores(answer_verdicts: list[str], reference_verdicts: list[str]) -> dict[str, float]:
    """Precision, recall and F1 from the verdicts of the answer's and the reference's claims (both non-empty)."""
    precision = answer_verdicts.count("entailment") / len(answer_verdicts)
    recall = reference_verdicts.count("entailment") / len(reference_verdicts)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"factual_precision": precision, "factual_recall": recall, "factual_f1": f1}


@answer_judge(
    name="factual_correctness",
    inputs=("q_ls", "pred_ls", "gt_ls"),
    metrics=("factual_precision", "factual_recall", "factual_f1"),
    requests="4",
    replies={"claims_v1": CLAIMS, "claim_verdicts_v1": CLAIM_VERDICTS},
    description="Factual correctness against the reference answer: claims extracted from the answer and from "
    "the reference, each checked against the other text (entailment / contradiction / neutral).\n"
    "precision = answer claims entailed by the reference / answer claims; recall = reference claims entailed by "
    "the answer / reference claims; F1. Claims and verdicts are listed per item. 4 requests per answer.",
)
async def judge_factual_correctness(
    client: LLMClient, prompts: Prompts, item: dict[str, Any], retries: int
) -> dict[str, Any]:
    split = await asyncio.gather(
        _claims(client, prompts, item["answer"], retries), _claims(client, prompts, item["reference"], retries)
    )
    result = _combined(list(split))
    if result["status"] != "ok":
        return result
    answer_claims, reference_claims = split[0].value, split[1].value
    empty = "no_answer_claims" if not answer_claims else "no_reference_claims" if not reference_claims else None
    if empty:
        return {**result, "status": empty, "answer_claims": answer_claims, "reference_claims": reference_claims}
    checks = await asyncio.gather(
        _verdicts(client, prompts, item["reference"], answer_claims, retries),
        _verdicts(client, prompts, item["answer"], reference_claims, retries),
    )
    result = _combined([*split, *checks])
    if result["status"] != "ok":
        return {**result, "answer_claims": answer_claims, "reference_claims": reference_claims}
    answer_verdicts, reference_verdicts = checks[0].value, checks[1].value
    return {
        **result,
        "answer_claims": [{"claim": c, "verdict": v} for c, v in zip(answer_claims, answer_verdicts, strict=True)],
        "reference_claims": [
            {"claim": c, "verdict": v} for c, v in zip(reference_claims, reference_verdicts, strict=True)
        ],
        **factual_scores(answer_verdicts, reference_verdicts),
    }
