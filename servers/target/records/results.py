"""Per-item records and what the tool returns of them: the answers, passages and ids, a TREC run of the
passages' ids by rank, and the latency summary.

A record (one line of the result file) holds ``index, id, conversation, turn, question, status`` (``ok`` or
``error``), ``reason`` and ``detail`` (an error's), ``answer, contexts [{text, id, score}], citations, usage``,
``latency`` (seconds of the attempt that answered), ``attempts``, ``flags`` (``empty``: the answer is blank;
``too_long``: it was cut to ``max_answer_chars``, ``answer_chars`` says how long it was) and ``cached``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from servers.target.conversations import Item
from servers.target.kinds.base import TargetReply
from servers.target.runner.calls import Outcome

RUN_TAG = "target"
TOKEN_NAMES = {
    "prompt_tokens": ("prompt_tokens", "input_tokens"),
    "completion_tokens": ("completion_tokens", "output_tokens"),
}
LATENCY_KEYS = ("p50", "p90", "p95", "p99", "mean", "max")


def record_of(item: Item, turn: int, outcome: Outcome, *, max_answer_chars: int, history_turns: int) -> dict[str, Any]:
    """The record of one asked item."""
    record: dict[str, Any] = {
        "index": item.index, "id": item.id, "conversation": item.conversation, "turn": turn,
        "question": item.question, "history_turns": history_turns, "attempts": outcome.attempts, "cached": False,
    }  # fmt: skip
    if outcome.reply is None:
        error = outcome.error
        return {**record, "status": "error", "reason": error.reason if error else "target_error",
                "detail": error.detail if error else "", "answer": None, "contexts": [], "citations": [],
                "usage": None, "latency": None, "flags": []}  # fmt: skip
    return {**record, **reply_fields(outcome.reply, max_answer_chars=max_answer_chars),
            "status": "ok", "reason": None, "detail": None, "latency": round(outcome.latency or 0.0, 6)}  # fmt: skip


def reply_fields(reply: TargetReply, *, max_answer_chars: int) -> dict[str, Any]:
    """The answer (cut and flagged when too long; flagged when blank), passages, citations and usage."""
    answer = reply.answer or ""
    flags, extra = [], {}
    if not answer.strip():
        flags.append("empty")
    if len(answer) > max_answer_chars:
        flags.append("too_long")
        extra["answer_chars"] = len(answer)
        answer = answer[:max_answer_chars]
    contexts = [{"text": p.text, "id": p.id, "score": p.score} for p in reply.contexts]
    return {"answer": answer, "contexts": contexts, "citations": [_plain(c) for c in reply.citations],
            "usage": dict(reply.usage) if reply.usage else None, "flags": flags, **extra}  # fmt: skip


def _plain(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None), list, dict)) else str(value)


def outputs(records: Sequence[dict[str, Any]]) -> dict[str, list]:
    """``pred_ls`` (None for a failed item: never scored), ``ret_psg`` and ``ret_ids`` (ids '' where the system
    gave none) aligned with the items; ``answered_id_ls``: the ids of the items answered (what ``select_qrels``
    keeps, so ``evaluate_trec`` does not score a failed item as an empty ranking)."""
    return {
        "pred_ls": [r["answer"] if r["status"] == "ok" else None for r in records],
        "ret_psg": [[c["text"] for c in r["contexts"]] for r in records],
        "ret_ids": [[c["id"] or "" for c in r["contexts"]] for r in records],
        "answered_id_ls": [r["id"] for r in records if r["status"] == "ok"],
    }


def run_lines(records: Sequence[dict[str, Any]]) -> list[str]:
    """TREC run lines of the answered items' passage ids in the system's rank order (score = depth - rank + 1,
    so trec_eval keeps that order); passages without an id, and repeats of an id, are left out."""
    lines = []
    for record in records:
        if record["status"] != "ok" or not _one_word(record["id"]):
            continue
        ids = [c["id"] for c in record["contexts"] if c["id"] and _one_word(c["id"])]
        ids = list(dict.fromkeys(ids))
        lines += [f"{record['id']} Q0 {doc} {rank} {len(ids) - rank + 1} {RUN_TAG}" for rank, doc in enumerate(ids, 1)]
    return lines


def _one_word(text: str) -> bool:
    """Whether ``text`` has no whitespace (``str.split`` cuts at what ``str.isspace`` calls space): a TREC field."""
    return text.split() == [text] or not text


def latency_summary(records: Sequence[dict[str, Any]]) -> dict[str, float | int | None]:
    """p50, p90, p95, p99, mean and max seconds of the answered items' latency (cached replies left out), and
    ``count``: how many items they rest on. None when no item was asked and answered."""
    import numpy as np

    values = [r["latency"] for r in records if r["status"] == "ok" and not r.get("cached") and r["latency"] is not None]
    if not values:
        return {**dict.fromkeys(LATENCY_KEYS), "count": 0}
    array = np.asarray(values, dtype=float)
    summary: dict[str, float | int | None] = {
        f"p{q}": round(float(np.percentile(array, q)), 6) for q in (50, 90, 95, 99)
    }
    summary["mean"] = round(float(array.mean()), 6)
    summary["max"] = round(float(array.max()), 6)
    summary["count"] = len(values)
    return summary


def usage_summary(records: Sequence[dict[str, Any]], *, kind: str) -> dict[str, Any]:
    """What this call sent (the ``usage`` output the cost table reads): requests (retries included; resumed and
    cached items sent none), cache hits (``target_cache``), and the tokens the system reported for the items it
    answered now (``items_with_tokens`` of them). ``system_under_test`` names the kind: the cost table shows the
    row with cost unknown and leaves it out of the run's total (docs/cost.md)."""
    sent = [r for r in records if not (r.get("cached") or r.get("resumed"))]
    tokens = {name: 0 for name in TOKEN_NAMES}
    reported = 0
    for record in sent:
        usage = record.get("usage") if record["status"] == "ok" else None
        if not isinstance(usage, dict):
            continue
        reported += 1
        for name, keys in TOKEN_NAMES.items():
            value = next((usage[k] for k in keys if isinstance(usage.get(k), int)), 0)
            tokens[name] += value
    return {"requests": sum(r["attempts"] for r in sent), "cache_hits": sum(bool(r.get("cached")) for r in records),
            **tokens, "items_with_tokens": reported, "system_under_test": kind}  # fmt: skip
