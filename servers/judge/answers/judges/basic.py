"""Answer judges: IDK (no-answer), citation support and the RAD-Bench 1-10 rating, one item at a time.

Each judge returns the item's status (ok / parse_error with the raw reply / error with the reason / a
judge-specific "nothing to judge" status) and its values; ``@answer_judge`` declares it as a tool.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from servers.judge.answers.common import SENTENCE, status_fields
from servers.judge.answers.declare import answer_judge
from servers.judge.common.asking import Prompts, Reply, Unreadable, ask
from servers.judge.common.parsing import parse_grade
from ultra_llm.client import LLMClient
from ultra_llm.replies import labels

IDK = Reply.of(attempted=labels(yes=1.0, no=0.0), idk=labels(yes=1.0, partial=0.5, no=0.0))
SUPPORT = Reply.of(support=labels(full=1.0, partial=0.5, none=0.0))
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


def _read_rating(text: str) -> int:
    parsed = parse_grade(text, low=1, high=10)
    if parsed.score is None:
        raise Unreadable(parsed.how)
    return parsed.score


# '##final score: N': a line, not JSON, so no schema; its own reader and repair text
RATING = Reply(
    read_with=_read_rating,
    repair_with="Reply with a single line and nothing else: ##final score: N, where N is a whole number from 1 to 10.",
    example_with="##final score: 10",
)


@answer_judge(
    name="idk_judge",
    inputs=("q_ls", "pred_ls"),
    metrics=("idk", "answer_attempted"),
    requests="1",
    replies={"idk_v1": IDK},
    scales={"idk": "ordinal", "answer_attempted": "nominal"},
    description="Does an answer say that it cannot answer (IDK), and does it attempt an answer? "
    "One request per answer.\n\n"
    "Per item `idk` (yes / partial / no -> 1 / 0.5 / 0, as MT-RAG) and `answer_attempted` (1 / 0);\n"
    "aggregate: the IDK rate and the answer-attempt rate over the items with status ok.",
)
async def judge_idk(client: LLMClient, prompts: Prompts, item: dict[str, Any], retries: int) -> dict[str, Any]:
    answer = await ask(
        client, prompts, "idk_v1", IDK, max_retries=retries, question=item["question"], answer=item["answer"]
    )
    result = status_fields(answer)
    if answer.status == "ok":
        label = answer.value["idk"]
        result.update(
            idk=IDK.value("idk", label),
            answer_attempted=IDK.value("attempted", answer.value["attempted"]),
            idk_label=label,
        )
    return result


@answer_judge(
    name="citation_judge",
    inputs=("q_ls", "pred_ls", "ret_psg"),
    metrics=("citation_precision", "citation_recall", "citation_f1"),
    requests="1 per (sentence, cited passage)",
    replies={"citation_v1": SUPPORT},
    description="Citation support (TREC RAG): for each answer sentence and each passage it cites ([1], [1, 2]), "
    "full / partial / none = 1 / 0.5 / 0. One request per (sentence, cited passage).\n\n"
    "Precision = mean over citations; recall = mean over sentences of their best citation (uncited = 0); F1.\n"
    "A citation of a passage number that was not shown counts as none (`invalid_citations`).",
)
async def judge_citations(client: LLMClient, prompts: Prompts, item: dict[str, Any], retries: int) -> dict[str, Any]:
    prompt = prompts.load("citation_v1")
    sentences = split_citations(item["answer"])
    passages = item["passages"]
    if not sentences:
        return {"status": "no_sentences", "requests": 0, "sentences": [], **citation_scores([])}

    async def one(sentence: str, number: int) -> dict[str, Any]:
        if not 1 <= number <= len(passages):  # a citation of a passage that was not given supports nothing
            return {"passage": number, "label": "none", "status": "invalid_citation", "requests": 0}
        answer = await ask(
            client, prompts, prompt, SUPPORT, max_retries=retries, question=item["question"], sentence=sentence,
            passage=passages[number - 1],
        )  # fmt: skip
        label = answer.value["support"] if answer.status == "ok" else None
        return {"passage": number, "label": label, **status_fields(answer)}

    judged = await asyncio.gather(*(asyncio.gather(*(one(s, n) for n in numbers)) for s, numbers in sentences))
    flat = [c for sentence in judged for c in sentence]
    broken = [c for c in flat if c["status"] in ("parse_error", "error")]
    failed = len(broken)
    values = [[SUPPORT.value("support", c["label"]) for c in sentence if c["label"] is not None] for sentence in judged]
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


@answer_judge(
    name="rag_judge",
    inputs=("q_ls", "pred_ls", "gt_ls", "ret_psg"),
    metrics=("rag_score",),
    requests="1",
    replies={"rag_judge_v1": RATING},
    scales={"rag_score": "ordinal"},
    description="Overall 1-10 rating (RAD-Bench / MT-RAG RB_llm) of faithfulness, appropriateness and "
    "completeness against the reference and the passages; `rag_score` = rating / 10. One request per answer.",
)
async def judge_rag(client: LLMClient, prompts: Prompts, item: dict[str, Any], retries: int) -> dict[str, Any]:
    passages = "\n".join(f"[{i}] {p}" for i, p in enumerate(item["passages"], start=1)) or "(none)"
    answer = await ask(
        client, prompts, "rag_judge_v1", RATING, max_retries=retries, question=item["question"], passages=passages,
        reference=item["reference"], answer=item["answer"],
    )  # fmt: skip
    result = status_fields(answer)
    if answer.status == "ok":
        result.update(rating=answer.value, rag_score=answer.value / 10)
    return result
