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

from servers.judge.answers.common import ask_prompt, numbered, status_fields, string_list
from servers.judge.common.asking import Answer, label_list, last_json
from ultra_llm.client import LLMClient

VERDICTS = ("entailment", "contradiction", "neutral")
_VERDICT_KEYS = {label: label for label in VERDICTS}


async def _claims(client: LLMClient, text: str, retries: int) -> Answer:
    return await ask_prompt(
        client, "claims_v1", retries, lambda t: string_list(last_json(t, dict), "claims"),
        'Reply with one JSON object: {"claims": [...]}.', text=text,
    )  # fmt: skip


async def _verdicts(client: LLMClient, premise: str, claims: list[str], retries: int) -> Answer:
    count = len(claims)
    return await ask_prompt(
        client, "claim_verdicts_v1", retries, lambda t: label_list(t, allowed=_VERDICT_KEYS, length=count),
        f'Reply with a JSON array of exactly {count} strings, each "entailment", "contradiction" or "neutral".',
        premise=premise, count=str(count), claims=numbered(claims), reply_length=count,
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


async def judge_factual_correctness(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    split = await asyncio.gather(_claims(client, item["answer"], retries), _claims(client, item["reference"], retries))
    result = _combined(list(split))
    if result["status"] != "ok":
        return result
    answer_claims, reference_claims = split[0].value, split[1].value
    empty = "no_answer_claims" if not answer_claims else "no_reference_claims" if not reference_claims else None
    if empty:
        return {**result, "status": empty, "answer_claims": answer_claims, "reference_claims": reference_claims}
    checks = await asyncio.gather(
        _verdicts(client, item["reference"], answer_claims, retries),
        _verdicts(client, item["answer"], reference_claims, retries),
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
