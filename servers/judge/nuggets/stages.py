"""AutoNuggetizer (Pradeep et al., arXiv:2411.09607): create, score and assign nuggets, and the six scores.

Create: passages in windows of ``WINDOW`` (in order); each request sends the current list and the
window and gets the updated full list back (at most ``max_nuggets``). Score: nuggets in batches of
``BATCH`` -> vital / okay. Assign: per answer, nuggets in batches of ``BATCH`` -> support /
partial_support / not_support. A label list whose length differs from its batch is a parse error;
after the retries the batch is marked failed and counted, and its nuggets keep ``None`` labels:
they are never dropped and never silently labelled.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from servers.judge.common.asking import Answer, Prompts, Reply, Unreadable, ask, last_json
from servers.judge.common.prompting import Prompt
from ultra_llm.batch_mode.passes import DEFERRED
from ultra_llm.client import LLMClient
from ultra_llm.replies import labels as label_values

WINDOW = 10
BATCH = 10
MAX_WORDS = 12
IMPORTANCE = {"vital": "vital", "okay": "okay"}
SUPPORT = {
    "support": "support",
    "supported": "support",
    "partial_support": "partial_support",
    "partial": "partial_support",
    "not_support": "not_support",
    "not_supported": "not_support",
    "no_support": "not_support",
}
# label lists, read as declared; their schemas are never sent with structured output (the nugget prompts never were)
IMPORTANCE_LABELS = Reply.of(labels=label_values(IMPORTANCE), listed=True, structured=False)
SUPPORT_LABELS = Reply.of(labels=label_values(SUPPORT), listed=True, structured=False)
CREDIT = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
STRICT_CREDIT = {"support": 1.0, "partial_support": 0.0, "not_support": 0.0}
SCORE_NAMES = ("all", "all_strict", "vital", "vital_strict", "weighted", "weighted_strict")


STAGES = ("create", "score", "assign")
PROMPT_NAMES = tuple(f"nugget_{stage}_v1" for stage in STAGES)  # the prompts a prompt_file may replace


def stage_prompts(prompts: Prompts) -> dict[str, Prompt]:
    """Each stage's prompt among the call's ``prompts`` (an override, else the built-in)."""
    return {stage: prompts.load(name) for stage, name in zip(STAGES, PROMPT_NAMES, strict=True)}


def prompt_info(prompts: Prompts) -> dict[str, str]:
    """Each stage's prompt version (name@hash), as the result records it."""
    return {stage: prompt.version for stage, prompt in stage_prompts(prompts).items()}


@dataclass
class Batch:
    """One request's outcome: which stage, which items, status, and the raw reply when unreadable."""

    stage: str
    start: int
    size: int
    status: str
    requests: int
    error: str | None = None
    raw: str | None = None
    member: str | None = None  # under a jury or samples: the member and sample that sent it
    sample: int | None = None

    def record(self) -> dict[str, Any]:
        """The batch as the files hold it (``member`` and ``sample`` only under a jury or samples)."""
        return {k: v for k, v in asdict(self).items() if k not in ("member", "sample") or v is not None}


@dataclass
class QueryNuggets:
    """The nuggets of one query: texts, importance labels (None = its score batch failed), and the batches."""

    qid: str
    query: str
    texts: list[str] = field(default_factory=list)
    importance: list[str | None] = field(default_factory=list)
    batches: list[Batch] = field(default_factory=list)
    num_passages: int = 0
    reused: bool = False

    @property
    def failed_batches(self) -> int:
        return sum(b.status != "ok" for b in self.batches)

    def as_record(self) -> dict[str, Any]:
        return {
            "qid": self.qid,
            "query": self.query,
            "nuggets": [{"text": t, "importance": i} for t, i in zip(self.texts, self.importance, strict=True)],
            "num_passages": self.num_passages,
            "failed_batches": self.failed_batches,
            "batches": [b.record() for b in self.batches],
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> QueryNuggets:
        nuggets = record.get("nuggets") or []
        return cls(
            qid=str(record["qid"]),
            query=str(record.get("query", "")),
            texts=[str(n["text"]) for n in nuggets],
            importance=[n.get("importance") for n in nuggets],
            batches=[Batch(**b) for b in record.get("batches", [])],
            num_passages=int(record.get("num_passages", 0)),
            reused=True,
        )


def _nugget_list(text: str, limit: int) -> list[str]:
    values = last_json(text, list)
    if not all(isinstance(v, str) and v.strip() for v in values):
        raise Unreadable("expected a JSON array of non-empty strings")
    if len(values) > limit:
        raise Unreadable(f"expected at most {limit} nuggets, got {len(values)}")
    return [v.strip() for v in values]


def _numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {text}" for i, text in enumerate(items, start=1))


async def create(
    qid: str,
    query: str,
    passages: Sequence[str],
    client: LLMClient,
    *,
    prompts: Prompts,
    max_retries: int,
    max_nuggets: int,
) -> QueryNuggets:
    """The iterative create stage: one request per window of passages, in order."""
    prompt = prompts.load("nugget_create_v1")
    result = QueryNuggets(qid, query, num_passages=len(passages))
    for start in range(0, len(passages), WINDOW):
        window = passages[start : start + WINDOW]
        values = {
            "query": query,
            "max_nuggets": str(max_nuggets),
            "count": str(len(result.texts)),
            "nuggets": json.dumps(result.texts, ensure_ascii=False),
            "passages": _numbered(window),
        }
        reply = Reply(
            read_with=functools.partial(_nugget_list, limit=max_nuggets),
            repair_with=f"Reply with the full updated list as a JSON array of at most {max_nuggets} strings.",
            example_with=json.dumps([f"nugget {i}" for i in range(1, max_nuggets + 1)]),  # the most it may hold
        )
        answer = await ask(client, prompts, prompt, reply, max_retries=max_retries, **values)
        result.batches.append(_batch("create", start, len(window), answer))
        if answer.error == DEFERRED:  # batch pass: the next window needs this answer; it comes next pass
            break
        if answer.status == "ok":  # a failed window keeps the list as it was, and is counted
            result.texts = answer.value
    result.importance = [None] * len(result.texts)
    return result


async def score(nuggets: QueryNuggets, client: LLMClient, *, prompts: Prompts, max_retries: int) -> None:
    """Label every nugget vital or okay, in batches; failed batches leave ``None`` and are counted."""
    prompt = prompts.load("nugget_score_v1")

    async def one(start: int) -> None:
        batch = nuggets.texts[start : start + BATCH]
        answer = await ask(
            client, prompts, prompt, IMPORTANCE_LABELS, max_retries=max_retries, length=len(batch), query=nuggets.query,
            count=str(len(batch)), nuggets=_numbered(batch),
        )  # fmt: skip
        nuggets.batches.append(_batch("score", start, len(batch), answer))
        if answer.status == "ok":
            nuggets.importance[start : start + len(batch)] = answer.value

    await asyncio.gather(*(one(start) for start in range(0, len(nuggets.texts), BATCH)))
    nuggets.batches.sort(key=lambda b: (b.stage != "create", b.stage, b.start))


def selected(nuggets: QueryNuggets, top_k: int) -> list[int]:
    """Indices of the nuggets assigned: all, or the first ``top_k`` with vital ones first (0 = all)."""
    order = list(range(len(nuggets.texts)))
    if top_k <= 0:
        return order
    order.sort(key=lambda i: nuggets.importance[i] != "vital")  # stable: importance order within each group
    return sorted(order[:top_k])


async def assign(
    nuggets: QueryNuggets,
    answer_text: str,
    indices: Sequence[int],
    client: LLMClient,
    *,
    prompts: Prompts,
    max_retries: int,
) -> tuple[list[str | None], list[Batch]]:
    """Support labels of the chosen nuggets for one answer (``None`` where the batch failed) and the batches."""
    prompt = prompts.load("nugget_assign_v1")
    labels: list[str | None] = [None] * len(indices)
    batches: list[Batch] = []

    async def one(start: int) -> None:
        batch = [nuggets.texts[i] for i in indices[start : start + BATCH]]
        answer = await ask(
            client, prompts, prompt, SUPPORT_LABELS, max_retries=max_retries, length=len(batch), query=nuggets.query,
            answer=answer_text, count=str(len(batch)), nuggets=_numbered(batch),
        )  # fmt: skip
        batches.append(_batch("assign", start, len(batch), answer))
        if answer.status == "ok":
            labels[start : start + len(batch)] = answer.value

    await asyncio.gather(*(one(start) for start in range(0, len(indices), BATCH)))
    batches.sort(key=lambda b: b.start)
    return labels, batches


def answer_scores(importance: Sequence[str | None], labels: Sequence[str | None]) -> dict[str, float | None]:
    """All, Vital, Weighted and their strict variants over the nuggets that have both labels.

    All = mean credit over the nuggets; Vital = mean over the vital ones; Weighted = (sum over vital
    + 0.5 * sum over okay) / (#vital + 0.5 * #okay). An empty set gives None, never a made-up value.
    """
    scores: dict[str, float | None] = {}
    for suffix, credit in (("", CREDIT), ("_strict", STRICT_CREDIT)):
        every = [credit[lab] for lab in labels if lab is not None]
        vital = [credit[lab] for imp, lab in zip(importance, labels, strict=True) if lab and imp == "vital"]
        okay = [credit[lab] for imp, lab in zip(importance, labels, strict=True) if lab and imp == "okay"]
        weight = len(vital) + 0.5 * len(okay)
        scores["all" + suffix] = sum(every) / len(every) if every else None
        scores["vital" + suffix] = sum(vital) / len(vital) if vital else None
        scores["weighted" + suffix] = (sum(vital) + 0.5 * sum(okay)) / weight if weight else None
    return {name: scores[name] for name in SCORE_NAMES}


def _batch(stage: str, start: int, size: int, answer: Answer) -> Batch:
    return Batch(stage, start, size, answer.status, answer.requests, answer.error, answer.raw)


def waits_for_a_batch(item: QueryNuggets) -> bool:
    """In a batch pass: a request of this query was deferred, so its later stages wait for the next pass."""
    return any(batch.error == DEFERRED for batch in item.batches)
