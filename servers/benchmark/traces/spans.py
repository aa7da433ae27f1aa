"""The neutral span every trace format is parsed into, the problems counted while reading, and text helpers."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import msgspec

from ultra_kit.limits.json_files import loads_limited

# Span kinds (OpenInference's names; the other formats' kinds map onto them)
ROOTLIKE = frozenset({"CHAIN", "AGENT"})
LLM, RETRIEVER = "LLM", "RETRIEVER"
QUESTION_KEYS = ("question", "query", "query_str", "input", "user_input", "text", "prompt")
ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")


class Passages(msgspec.Struct, gc=False):
    """A retriever's passages as the three aligned lists a record holds: texts, ids and scores (None where absent)."""

    contents: list[str | None] = msgspec.field(default_factory=list)
    ids: list[str | None] = msgspec.field(default_factory=list)
    scores: list[float | None] = msgspec.field(default_factory=list)

    def add(self, content: str | None, doc_id: str | None = None, score: float | None = None) -> None:
        self.contents.append(content)
        self.ids.append(doc_id)
        self.scores.append(score)

    def __len__(self) -> int:
        return len(self.contents)


class Span(msgspec.Struct, gc=False):
    """One span (OTLP), observation (Langfuse) or run (LangSmith), in the fields a record needs (a struct: built in
    C, a few times faster than a dataclass's __init__, and untracked by the cyclic GC: it holds no cycle)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str | None  # LLM, RETRIEVER, CHAIN, ...; None: no convention recognised
    start: float  # seconds since the epoch
    end: float
    line: int  # where it was read (line or record number)
    input: str | None = None
    output: str | None = None
    documents: Passages = msgspec.field(default_factory=Passages)  # a span that has none may share one empty Passages
    tokens_in: int | None = None
    tokens_out: int | None = None
    model: str | None = None
    session: str | None = None
    error: bool = False
    attributes: dict[str, Any] = msgspec.field(default_factory=dict)  # named metadata is looked up here
    pending: Any = None  # where to read what was left unread (a span read in full only if it becomes a root)


class Problems:
    """Bad input counted by reason, with the first example of each (a line, a span or a trace id)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, str] = {}

    def add(self, reason: str, example: str, count: int = 1) -> None:
        self.counts[reason] += count
        self.examples.setdefault(reason, example)

    def counter(self) -> Counter[str]:
        """Reasons as ``data_info`` shows them: "reason (e.g. example)" -> count."""
        return Counter({f"{reason} (e.g. {self.examples[reason]})": n for reason, n in self.counts.items()})


def as_text(value: Any, keys: tuple[str, ...]) -> str | None:
    """A value as text: a string as it is (a JSON object in it is opened), a mapping's first string under
    ``keys``, a one-entry mapping's string, or else the value as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value.startswith("{"):
            return value
        try:
            value = loads_limited(value, path="a span attribute")  # not JSON or too deep: a ValueError
        except ValueError:
            return value
        if not isinstance(value, dict):
            return json.dumps(value)
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), str):
                return value[key]
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(value) == 1 and strings:
            return strings[0]
    if isinstance(value, list) and value and isinstance(value[-1], dict):
        return as_text(value[-1].get("content"), keys)  # a list of chat messages: the last one
    return json.dumps(value, ensure_ascii=False, default=str)


def documents_from(value: Any) -> Passages:
    """Passages from a retriever's JSON output: LangChain documents (page_content, id, metadata) or
    objects with content/text, id and score; a ``{"documents": [...]}`` wrapper is opened."""
    if isinstance(value, str):
        try:
            value = loads_limited(value, path="a span attribute")  # not JSON or too deep: a ValueError
        except ValueError:
            return Passages()
    if isinstance(value, dict):
        value = value.get("documents", value.get("output"))
    found = Passages()
    for item in value if isinstance(value, list) else ():
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, dict):
            meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
            content = item.get("page_content", item.get("content", item.get("text")))
            doc_id = item.get("id") or meta.get("id") or meta.get("doc_id")
            score = item.get("score", meta.get("score"))
            found.add(content, str(doc_id) if doc_id is not None else None, _number(score))
    return found


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
