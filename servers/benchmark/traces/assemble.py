"""Spans -> traces -> one record per answered question.

A trace's root (a span without a parent) gives the question, the answer (or the span the user names
does), the latency and the time; its retriever spans give the passages, its LLM spans the model and
tokens. Sessions are numbered in time order (``turn``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from servers.benchmark.traces.spans import LLM, RETRIEVER, Problems, Span

Record = dict[str, Any]
Lookup = Callable[[Span, str], Any]  # a named attribute of a span, or None


def records_from_spans(
    spans: list[Span], problems: Problems, *, answer_span: str, metadata: list[str], lookup: Lookup
) -> tuple[list[Record], Counter[str], Counter[str]]:
    """One record per trace that has a question and an answer, in time order; the dropped traces and the
    problems noticed, counted by reason."""
    traces: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        traces[span.trace_id].append(span)
    dropped = Problems()
    records: list[Record] = []
    for trace_id, members in traces.items():
        root = _root(trace_id, members, problems, dropped)
        if root is None:
            continue
        record = _record(trace_id, root, members, answer_span, dropped)
        if record is not None:
            record["metadata"] = {name: _named(name, root, members, lookup) for name in metadata}
            records.append(record)
    records.sort(key=lambda r: (r["_start"], r["_line"]))
    _number_turns(records)
    for record in records:
        del record["_start"]
    return records, dropped.counter(), problems.counter()


def _root(trace_id: str, members: list[Span], problems: Problems, dropped: Problems) -> Span | None:
    """The trace's root; spans whose parent is absent count as roots, and a trace whose spans are not all
    reached from a root holds a parent cycle and is dropped."""
    by_id: dict[str, Span] = {}
    for span in members:
        if span.span_id in by_id:
            problems.add("spans repeated in their trace (same span id), kept once", f"span {span.span_id}")
        else:
            by_id[span.span_id] = span
    children: dict[str | None, list[Span]] = defaultdict(list)
    roots = []
    for span in by_id.values():
        if span.parent_id is None:
            roots.append(span)
        elif span.parent_id not in by_id:
            problems.add("spans whose parent is not in the file", f"span {span.span_id} in trace {trace_id}")
            roots.append(span)
        else:
            children[span.parent_id].append(span)
    reached, stack = 0, list(roots)
    while stack:
        span = stack.pop()
        reached += 1
        stack.extend(children.pop(span.span_id, ()))
    if reached < len(by_id):
        dropped.add("traces whose spans' parents form a cycle", f"trace {trace_id}")
        return None
    if not any(span.kind for span in by_id.values()):
        dropped.add("traces with no span of a known convention (OpenInference, GenAI)", f"trace {trace_id}")
        return None
    members[:] = sorted(by_id.values(), key=lambda s: s.start)
    return min(roots, key=lambda s: (s.parent_id is not None, s.start))


def _record(trace_id: str, root: Span, members: list[Span], answer_span: str, dropped: Problems) -> Record | None:
    question = root.input or next((s.input for s in members if s.kind in (LLM, RETRIEVER) and s.input), None)
    if answer_span:
        named = [s for s in members if s.name == answer_span and s.output is not None]
        if not named:
            dropped.add(f"traces without a span named '{answer_span}' with an output", f"trace {trace_id}")
            return None
        answer = max(named, key=lambda s: s.end).output
    else:
        llm_outputs = [s.output for s in members if s.kind == LLM and s.output]
        answer = root.output if root.output else (llm_outputs[-1] if llm_outputs else None)
    if not question:
        dropped.add("traces without a question (no input on the root)", f"trace {trace_id}")
        return None
    if not answer:
        dropped.add("traces without an answer (no output)", f"trace {trace_id}")
        return None
    retrieved = [s for s in members if s.kind == RETRIEVER and s.documents]
    documents = retrieved[-1].documents if retrieved else []
    llms = [s for s in members if s.kind == LLM]
    return {
        "trace_id": trace_id,
        "question": question,
        "answer": answer,
        "contexts": [d.content for d in documents],
        "context_ids": [d.id for d in documents],
        "context_scores": [d.score for d in documents],
        "latency_s": round(root.end - root.start, 6),
        "tokens_in": _total(s.tokens_in for s in llms),
        "tokens_out": _total(s.tokens_out for s in llms),
        "model": next((s.model for s in reversed(llms) if s.model), None),
        "session_id": root.session or next((s.session for s in members if s.session), None),
        "turn": None,
        "start_time": datetime.fromtimestamp(root.start, timezone.utc).isoformat(timespec="milliseconds"),
        "error": any(s.error for s in members),
        "_start": root.start,
        "_line": root.line,
    }


def _total(counts: Any) -> int | None:
    known = [int(c) for c in counts if c is not None]
    return sum(known) if known else None


def _named(name: str, root: Span, members: list[Span], lookup: Lookup) -> Any:
    found = lookup(root, name)
    if found is None:
        found = next((v for s in members if (v := lookup(s, name)) is not None), None)
    return found


def _number_turns(records: list[Record]) -> None:
    """``turn``: 1, 2, ... within each session, in time order (records are sorted by time)."""
    seen: dict[str, int] = defaultdict(int)
    for record in records:
        if record["session_id"] is not None:
            seen[record["session_id"]] += 1
            record["turn"] = seen[record["session_id"]]
