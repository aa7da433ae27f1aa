"""Spans -> traces -> one record per answered question.

A trace's root (a span without a parent) gives the question, the answer (or the span the user names
does), the latency and the time; its retriever spans give the passages, its LLM spans the model and
tokens. Sessions are numbered in time order (``turn``).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import datetime, timezone
from operator import attrgetter
from typing import Any

from servers.benchmark.traces.spans import LLM, RETRIEVER, Problems, Span

Record = dict[str, Any]
Lookup = Callable[[Span, str], Any]  # a named attribute of a span, or None
Complete = Callable[[Span], None]  # read what a span left unread (``Span.pending``), once it is a root
Traces = dict[str, list[Span]]  # trace id -> its spans
START = attrgetter("start")
_DAYS: dict[int, str] = {}  # day number since the epoch -> its ISO date
_CLOCK = tuple(f"T{hour:02d}:{minute:02d}:" for hour in range(24) for minute in range(60))  # minute of the day
_SECONDS = tuple(f"{second:02d}" for second in range(60))
_MILLIS = tuple(f".{milli:03d}+00:00" for milli in range(1000))


def by_trace(spans: list[Span]) -> Traces:
    """The spans grouped by trace, traces in the order they first appear; ``spans`` is emptied."""
    traces: Traces = {}
    member_lists = traces.get
    for span in spans:
        members = member_lists(span.trace_id)
        if members is None:
            traces[span.trace_id] = [span]
        else:
            members.append(span)
    spans.clear()
    return traces


def records_from_traces(
    traces: Traces,
    problems: Problems,
    *,
    answer_span: str,
    metadata: list[str],
    lookup: Lookup,
    complete: Complete,
) -> tuple[list[Record], Counter[str], Counter[str]]:
    """One record per trace that has a question and an answer, in time order; the dropped traces and the
    problems noticed, counted by reason. ``traces`` is emptied: each trace's spans are let go once its record is
    made, so the spans and the records are not all held at once."""
    dropped = Problems()
    records: list[Record] = []
    keys: list[tuple[float, int]] = []  # each record's (start, line): its place in time order
    ordered, last = True, (-math.inf, 0)
    turns: dict[str, int] = {}
    for trace_id in list(traces):
        members = traces.pop(trace_id)
        root = _root(trace_id, members, problems, dropped)
        if root is None:
            continue
        if root.pending is not None:
            complete(root)
        record = _record(trace_id, root, members, answer_span, dropped)
        if record is not None:
            record["metadata"] = {name: _named(name, root, members, lookup) for name in metadata} if metadata else {}
            session = record["session_id"]
            if session is not None:  # the turn if the records come in time order (numbered again if not)
                record["turn"] = turns[session] = turns.get(session, 0) + 1
            key = (root.start, root.line)
            ordered = ordered and last <= key
            last = key
            keys.append(key)
            records.append(record)
    if not ordered:  # a file in time order (as a Collector writes it) skips the sort and a second pass
        records = [records[i] for i in sorted(range(len(records)), key=keys.__getitem__)]
        _number_turns(records)
    return records, dropped.counter(), problems.counter()


def _root(trace_id: str, members: list[Span], problems: Problems, dropped: Problems) -> Span | None:
    """The trace's root; spans whose parent is absent count as roots, and a trace whose spans are not all
    reached from a root holds a parent cycle and is dropped. ``members`` ends sorted by start time."""
    by_id = {span.span_id: span for span in members}
    if len(by_id) < len(members):
        by_id = {}
        for span in members:
            if span.span_id in by_id:
                problems.add("spans repeated in their trace (same span id), kept once", f"span {span.span_id}")
            else:
                by_id[span.span_id] = span
        members[:] = by_id.values()
    roots, walk, known = [], False, False
    for span in members:
        known = known or span.kind is not None
        parent = span.parent_id
        if parent is None:
            roots.append(span)
            continue
        above = by_id.get(parent)
        if above is None:
            problems.add("spans whose parent is not in the file", f"span {span.span_id} in trace {trace_id}")
            roots.append(span)
        elif above.start >= span.start:  # each parent starting strictly earlier rules a cycle out; else walk
            walk = True
    if walk and _unreached(by_id, roots):
        dropped.add("traces whose spans' parents form a cycle", f"trace {trace_id}")
        return None
    if not known:
        dropped.add("traces with no span of a known convention (OpenInference, GenAI)", f"trace {trace_id}")
        return None
    members.sort(key=START)
    if len(roots) == 1:
        return roots[0]
    return min(roots, key=lambda s: (s.parent_id is not None, s.start))


def _unreached(by_id: dict[str, Span], roots: list[Span]) -> bool:
    """Some span is not reached from a root: its parents go round in a cycle."""
    children: dict[str | None, list[Span]] = defaultdict(list)
    for span in by_id.values():
        if span.parent_id in by_id:
            children[span.parent_id].append(span)
    reached, stack = 0, list(roots)
    while stack:
        span = stack.pop()
        reached += 1
        stack.extend(children.pop(span.span_id, ()))
    return reached < len(by_id)


def _record(trace_id: str, root: Span, members: list[Span], answer_span: str, dropped: Problems) -> Record | None:
    question, answer, retrieved, model = root.input, root.output, None, None
    tokens_in = tokens_out = None
    llm_output = fallback_question = session = None
    error = False
    for span in members:  # one pass, in time order
        kind = span.kind
        if kind == LLM:
            if span.output:
                llm_output = span.output
            if span.tokens_in is not None:
                tokens_in = (tokens_in or 0) + int(span.tokens_in)
            if span.tokens_out is not None:
                tokens_out = (tokens_out or 0) + int(span.tokens_out)
            model = span.model or model
        elif kind == RETRIEVER and span.documents:
            retrieved = span.documents
        if fallback_question is None and span.input and kind in (LLM, RETRIEVER):
            fallback_question = span.input
        session = session or span.session
        error = error or span.error
    question = question or fallback_question
    if answer_span:
        named = [s for s in members if s.name == answer_span and s.output is not None]
        if not named:
            dropped.add(f"traces without a span named '{answer_span}' with an output", f"trace {trace_id}")
            return None
        answer = max(named, key=lambda s: s.end).output
    elif not answer:
        answer = llm_output
    if not question:
        dropped.add("traces without a question (no input on the root)", f"trace {trace_id}")
        return None
    if not answer:
        dropped.add("traces without an answer (no output)", f"trace {trace_id}")
        return None
    return {
        "trace_id": trace_id,
        "question": question,
        "answer": answer,
        "contexts": retrieved.contents if retrieved else [],  # the span's lists: a span is in one trace
        "context_ids": retrieved.ids if retrieved else [],
        "context_scores": retrieved.scores if retrieved else [],
        "latency_s": round(root.end - root.start, 6),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "model": model,
        "session_id": root.session or session,
        "turn": None,
        "start_time": _iso_time(root.start),
        "error": error,
        "_line": root.line,
    }


def _iso_time(seconds: float) -> str:
    """``datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")``, a few times faster: the
    day's date is made once (a trace file spans few days), the time of day from tables of its parts, rounded as
    datetime does."""
    if seconds < 0:  # before 1970: datetime itself
        return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")
    whole = int(seconds)
    micros = round((seconds - whole) * 1e6)  # to the nearest microsecond, ties to even (datetime's rounding)
    if micros == 1_000_000:
        whole, micros = whole + 1, 0
    day, rest = divmod(whole, 86400)
    date = _DAYS.get(day)
    if date is None:
        date = _DAYS[day] = datetime.fromtimestamp(day * 86400, timezone.utc).date().isoformat()
    minute, second = divmod(rest, 60)
    return f"{date}{_CLOCK[minute]}{_SECONDS[second]}{_MILLIS[micros // 1000]}"


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
