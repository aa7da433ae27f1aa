"""Answer judges: ``idk_judge`` (no-answer / IDK), ``citation_judge`` (citation support) and ``rag_judge`` (1-10).

Each item gets a status (ok / parse_error with the raw reply / error with the reason / a judge-specific
"nothing to judge" status); the aggregate is the mean over the ok items with the counts of the rest.

result = asyncio.run(run_answer_judge("idk", q_ls=[...], pred_ls=[...], judge_llm={...}))
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from typing_extensions import TypedDict

from servers.core.errors import InputError
from servers.core.files import atomic_write_json, result_path
from servers.judge.asking import Answer, Unreadable, ask, last_json
from servers.core.llm.cache import open_cache
from servers.core.llm.client import LLMClient, LLMSettings
from servers.judge.parsing import parse_grade
from servers.judge.prompting import load_prompt

IDK_VALUES = {"yes": 1.0, "partial": 0.5, "no": 0.0}
SUPPORT_VALUES = {"full": 1.0, "partial": 0.5, "none": 0.0}
METRICS = {
    "idk": ("idk", "answer_attempted"),
    "citation": ("citation_precision", "citation_recall", "citation_f1"),
    "rag": ("rag_score",),
}
_CITE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
# A sentence runs to . ! or ? (with the citation markers right after it) followed by a space or the end.
_SENTENCE = re.compile(r"\S.*?(?:[.!?]+(?:\s*\[\d+(?:\s*,\s*\d+)*\])*(?=\s|$)|$)", re.DOTALL)
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.!?,;:])")


class AnswerJudgeResult(TypedDict):
    result_path: str
    aggregate: dict[str, Any]
    items: list[dict[str, Any]]
    counts: dict[str, int]
    usage: dict[str, int]
    prompt: dict[str, str]


def split_citations(answer: str) -> list[tuple[str, list[int]]]:
    """The answer's sentences, each with the passage numbers it cites (``[1]``, ``[1, 2]``, ``[1][3]``).

    Markers written just after a sentence's full stop belong to that sentence. The sentence text is
    returned without its markers. Abbreviations such as "e.g." end a sentence (a known limitation).
    """
    sentences: list[tuple[str, list[int]]] = []
    for match in _SENTENCE.finditer(answer.strip()):
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


def _base(answer: Answer) -> dict[str, Any]:
    data: dict[str, Any] = {"status": answer.status, "requests": answer.requests, "cached": answer.cached}
    if answer.status != "ok":
        data.update(error=answer.error, raw=answer.raw)
    return data


async def judge_idk(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    prompt = load_prompt("idk_v1")
    answer = await ask(
        client,
        prompt.render(question=item["question"], answer=item["answer"]),
        read=_read_idk,
        repair='Reply with one JSON object: {"attempted": "yes" or "no", "idk": "yes", "partial" or "no"}.',
        version=prompt.version,
        max_retries=retries,
    )
    return {**_base(answer), **(answer.value or {})}


async def judge_rag(client: LLMClient, item: dict[str, Any], retries: int) -> dict[str, Any]:
    prompt = load_prompt("rag_judge_v1")
    passages = "\n".join(f"[{i}] {p}" for i, p in enumerate(item["passages"], start=1)) or "(none)"
    messages = prompt.render(
        question=item["question"], passages=passages, reference=item["reference"], answer=item["answer"]
    )
    answer = await ask(
        client,
        messages,
        read=_read_rating,
        repair="Reply with a single line and nothing else: ##final score: N, where N is a whole number from 1 to 10.",
        version=prompt.version,
        max_retries=retries,
    )
    result = _base(answer)
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
        return {"passage": number, "label": answer.value, **_base(answer)}

    judged = await asyncio.gather(*(asyncio.gather(*(one(s, n) for n in numbers)) for s, numbers in sentences))
    flat = [c for sentence in judged for c in sentence]
    failed = sum(c["status"] in ("parse_error", "error") for c in flat)
    values = [[SUPPORT_VALUES[c["label"]] for c in sentence if c["label"] is not None] for sentence in judged]
    return {
        "status": "incomplete" if failed else "ok",
        "requests": sum(c["requests"] for c in flat),
        "failed_citations": failed,
        "invalid_citations": sum(c["status"] == "invalid_citation" for c in flat),
        "num_citations": len(flat),
        "sentences": [
            {"text": text, "citations": list(citations)} for (text, _), citations in zip(sentences, judged, strict=True)
        ],
        **citation_scores(values),
    }


JUDGES = {"idk": judge_idk, "citation": judge_citations, "rag": judge_rag}
PROMPTS = {"idk": "idk_v1", "citation": "citation_v1", "rag": "rag_judge_v1"}


def build_items(
    q_ls: list[str],
    pred_ls: list[str],
    *,
    ret_psg: list[list[str]] | None = None,
    gt_ls: list[Any] | None = None,
    id_ls: list[str] | None = None,
    need_passages: bool = False,
    need_reference: bool = False,
) -> list[dict[str, Any]]:
    """One item per question: the question, the answer, and the passages / reference when the judge needs them."""
    n = len(q_ls)
    lists = {"pred_ls": pred_ls, "ret_psg": ret_psg, "gt_ls": gt_ls, "id_ls": id_ls}
    for name, values in lists.items():
        if values is not None and len(values) != n:
            raise InputError(f"{name} has {len(values)} items but q_ls has {n}: give one per question")
    if need_passages and ret_psg is None:
        raise InputError("ret_psg (the passages shown to the generator, one list per question) is needed")
    if need_reference and gt_ls is None:
        raise InputError("gt_ls (the reference answers, one per question) is needed")
    items = []
    for i in range(n):
        reference = gt_ls[i] if gt_ls is not None else ""
        if isinstance(reference, list):
            reference = reference[0] if reference else ""
        items.append(
            {
                "id": str(id_ls[i]) if id_ls is not None else str(i),
                "question": str(q_ls[i]),
                "answer": str(pred_ls[i] or ""),
                "passages": [str(p) for p in (ret_psg[i] if ret_psg is not None else [])],
                "reference": str(reference),
            }
        )
    return items


async def run_answer_judge(
    kind: str,
    items: list[dict[str, Any]],
    *,
    judge_llm: dict[str, Any],
    judge_timeout: float = 60.0,
    judge_max_retries: int = 3,
    judge_max_workers: int = 8,
    judge_cache: str = "",
    save_path: str = "output/judge",
    **client_options: Any,
) -> AnswerJudgeResult:
    """Judge every item with the ``kind`` judge, summarise and write ``<kind>_judge_<time>.json``."""
    settings = LLMSettings.from_settings(
        judge_llm,
        judge_timeout=judge_timeout,
        judge_max_retries=judge_max_retries,
        judge_max_workers=judge_max_workers,
        **client_options,
    )
    judge, metrics, prompt_name = lookup(kind)
    cache = open_cache(judge_cache)
    try:
        async with LLMClient(settings, cache) as client:
            judged = await asyncio.gather(*(judge(client, item, judge_max_retries) for item in items))
            usage = client.usage.as_dict()
    finally:
        cache.close()
    results = [{"id": item["id"], **result} for item, result in zip(items, judged, strict=True)]
    aggregate = summarise(metrics, results)
    counts: dict[str, int] = {"items": len(results)}
    for result in results:
        counts[result["status"]] = counts.get(result["status"], 0) + 1
    prompt = load_prompt(prompt_name).describe()
    out = result_path(save_path, f"{kind}_judge")
    document = {
        "tool": f"{kind}_judge",
        "aggregate": aggregate,
        "counts": counts,
        "items": results,
        "usage": usage,
        "prompt": prompt,
        "settings": {"judge_llm": settings.public()},
    }
    atomic_write_json(out, document)
    return AnswerJudgeResult(
        result_path=str(out), aggregate=aggregate, items=results, counts=counts, usage=usage, prompt=prompt
    )


def lookup(kind: str) -> tuple[Any, tuple[str, ...], str]:
    """The judge function, its metric names and its (first) prompt name."""
    from servers.judge.answer_judges_ragas import JUDGES as RAGAS

    if kind in RAGAS:
        return RAGAS[kind]
    return JUDGES[kind], METRICS[kind], PROMPTS[kind]


def summarise(metrics: Sequence[str], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each metric's mean over the items with status ok (and a value), with the number excluded."""
    ok = [r for r in results if r["status"] == "ok"]
    aggregate: dict[str, Any] = {}
    for name in metrics:
        values = [r[name] for r in ok if r.get(name) is not None]
        aggregate[name] = sum(values) / len(values) if values else None
        aggregate[f"num_{name}"] = len(values)
    aggregate["num_items"] = len(results)
    aggregate["num_excluded"] = len(results) - len(ok)
    return aggregate
