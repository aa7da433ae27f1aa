"""Conversations: which items are turns of one conversation, in which order, and the history each turn sends.

Turns are grouped by ``conv_ls`` (a conversation id per item) when given, else by MT-RAG's ids
(``<conversation><::><turn>``, ordered by the turn number), else each item stands alone. A question may also
be MT-RAG's input layout: the conversation so far as ``[{speaker, text}, ...]``, the question last.

The history of turn k is the earlier turns of its conversation, oldest first, as ``{role, content}``: the
questions, and either the system's own answers (``history: own``, so turn k waits for turn k-1) or the
reference answers (``history: reference``: from ``gt_ls``, or the agent turns of MT-RAG's layout; the turns
then need not wait for each other).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ultra_base.errors import InputError
from ultra_kit.mtrag.references import first_reference

HISTORY_MODES = ("own", "reference")
_MTRAG_ID = re.compile(r"^(?P<conversation>.+)<::>(?P<turn>\d+)$")
_ROLES = {"user": "user", "agent": "assistant", "assistant": "assistant", "system": "system"}


@dataclass(frozen=True)
class Item:
    """One question as asked: its position, id, text, conversation and the history its layout gives."""

    index: int
    id: str
    question: str
    conversation: str
    given_history: tuple[dict[str, str], ...] | None  # MT-RAG's layout: the turns before the question
    reference: str | None  # the reference answer (gt_ls), for history: reference


@dataclass(frozen=True)
class Plan:
    """The items and the order they are asked in: each thread's turns one after another, threads at once."""

    items: list[Item]
    threads: list[list[int]]  # item indices per conversation, in turn order
    history: str

    def history_of(self, item: Item, earlier: Sequence[Item], answer_of: Callable[[int], str]) -> tuple[dict, ...]:
        """The history sent with ``item``: the ``earlier`` turns of its thread with own or reference answers."""
        if item.given_history is not None:
            if self.history == "reference":
                return item.given_history
            answers = iter([answer_of(turn.index) for turn in earlier])
            return tuple({**t, "content": next(answers, t["content"])} if t["role"] == "assistant" else t
                         for t in item.given_history)  # fmt: skip
        turns: list[dict[str, str]] = []
        for turn in earlier:
            answer = answer_of(turn.index) if self.history == "own" else turn.reference or ""
            turns += [{"role": "user", "content": turn.question}, {"role": "assistant", "content": answer}]
        return tuple(turns)


def plan(
    q_ls: Sequence[Any], id_ls: Sequence[Any] | None, conv_ls: Sequence[Any] | None, gt_ls: Sequence[Any] | None,
    *, history: str,
) -> Plan:  # fmt: skip
    """The plan of a run; lists of unequal length, bad layouts and a missing ``gt_ls`` are InputErrors."""
    if history not in HISTORY_MODES:
        raise InputError(f"target.history must be one of {', '.join(HISTORY_MODES)}, got {history!r}")
    n = len(q_ls)
    if not n:
        raise InputError("q_ls is empty: there is no question to ask")
    for name, values in (("id_ls", id_ls), ("conv_ls", conv_ls), ("gt_ls", gt_ls)):
        if values is not None and len(values) != n:
            raise InputError(f"q_ls has {n} questions but {name} has {len(values)}; they must have equal length")
    ids = [str(v) for v in id_ls] if id_ls is not None else [str(i) for i in range(n)]
    if len(set(ids)) != n:
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise InputError(f"id_ls holds {duplicate!r} twice; each item needs its own id")
    conversations, turns = _grouping(ids, conv_ls)
    items = []
    for i, value in enumerate(q_ls):
        question, given = _question(value, i)
        reference = first_reference(gt_ls[i], i) if gt_ls is not None else None
        items.append(Item(i, ids[i], question, conversations[i], given, reference))
    threads: dict[str, list[int]] = {}
    for i in sorted(range(n), key=lambda i: (turns[i], i)):
        threads.setdefault(conversations[i], []).append(i)
    ordered = list(threads.values())
    if history == "reference":
        multi = [t for t in ordered if len(t) > 1 and any(items[i].given_history is None for i in t)]
        if multi and gt_ls is None:
            raise InputError(
                "target.history is reference but no gt_ls was given: the reference answers of earlier turns come "
                "from gt_ls (map it with benchmark.get_data), or use history: own"
            )
    return Plan(items, ordered, history)


def _grouping(ids: list[str], conv_ls: Sequence[Any] | None) -> tuple[list[str], list[int]]:
    """(the conversation of each item, its turn number for ordering)."""
    if conv_ls is not None:
        return [str(c) for c in conv_ls], [0] * len(ids)
    matches = [_MTRAG_ID.match(i) for i in ids]
    if all(matches):
        return [m["conversation"] for m in matches], [int(m["turn"]) for m in matches]  # type: ignore[index]
    return list(ids), [0] * len(ids)


def _question(value: Any, index: int) -> tuple[str, tuple[dict[str, str], ...] | None]:
    if isinstance(value, str):
        return value, None
    if isinstance(value, list) and value and all(isinstance(t, dict) for t in value):
        turns = []
        for turn in value:
            speaker, text = turn.get("speaker", turn.get("role")), turn.get("text", turn.get("content"))
            if speaker not in _ROLES or not isinstance(text, str):
                raise InputError(f"q_ls[{index}]: each turn needs speaker (user or agent) and text")
            turns.append({"role": _ROLES[speaker], "content": text})
        if turns[-1]["role"] != "user":
            raise InputError(f"q_ls[{index}]: the last turn must be the user's question")
        return turns[-1]["content"], tuple(turns[:-1])
    raise InputError(f"q_ls[{index}]: expected a question (text) or MT-RAG turns ([{{speaker, text}}, ...])")
