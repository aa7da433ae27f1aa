"""Langfuse traces exports and LangSmith runs exports -> ``Span`` objects.

Langfuse: a JSON list of traces (or the API's ``{"data": [...]}`` page), each with its ``observations``
as objects; or a page of observations (``GET /api/public/v2/observations``, the langfuse SDK's
``ObservationsV2Response``), each naming its trace. LangSmith: JSON Lines of runs (the langsmith SDK's
``schemas.Run``), each a root run with its ``child_runs`` nested, or flat runs joined by ``parent_run_id``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from servers.benchmark.traces.spans import ANSWER_KEYS, LLM, QUESTION_KEYS, RETRIEVER, Passages, Problems, Span, as_text
from servers.benchmark.traces.spans import documents_from as _documents
from ultra_base.errors import InputError
from ultra_kit.readers import check_json_depth, read_json

LANGFUSE_KINDS = {"GENERATION": LLM, "RETRIEVER": RETRIEVER}
LANGSMITH_KINDS = {"llm": LLM, "chat_model": LLM, "retriever": RETRIEVER}
SESSION_KEYS = ("session_id", "thread_id", "conversation_id")  # LangSmith threads: metadata keys
TRACE_FIELDS = ("release", "version", "userId", "tags", "name", "environment")  # Langfuse: named like metadata


def is_langfuse(data: Any) -> bool:
    """A Langfuse export: traces with their ``observations`` (a list, or the API's {"data": [...]}), or a page
    of observations (``GET /api/public/v2/observations``: each with its ``traceId``)."""
    items = data.get("data") if isinstance(data, dict) else data
    first = items[0] if isinstance(items, list) and items else None
    return isinstance(first, dict) and ("observations" in first or ("traceId" in first and "type" in first))


def is_langsmith(run: Any) -> bool:
    """A LangSmith run (one line of a runs export)."""
    return isinstance(run, dict) and "run_type" in run and ("child_runs" in run or "parent_run_id" in run)


def read_langfuse(source: Path, cap: int, problems: Problems, _names: list[str], _answer: str) -> list[Span]:
    """Traces with their observations: each trace becomes a root span (its input, output, session, metadata)
    over its observations. A page of observations (no trace objects): each trace's observations, its root the
    observation without a parent."""
    data = read_json(source)
    items = data.get("data") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise InputError(
            "expected a Langfuse export: a JSON list of traces with their observations, or a page of observations",
            path=str(source),
        )
    if items and isinstance(items[0], dict) and "observations" not in items[0] and "traceId" in items[0]:
        return _capped(_observation_page(items, problems), cap, problems)
    spans: list[Span] = []
    for number, trace in enumerate(items):
        if not isinstance(trace, dict) or not trace.get("id"):
            problems.add("Langfuse traces without an id, skipped", f"record {number}")
            continue
        observations = [o for o in trace.get("observations") or () if isinstance(o, dict)]
        start = _seconds(trace.get("timestamp"))
        ends = [_seconds(o.get("endTime")) for o in observations if o.get("endTime")]
        latency = trace.get("latency")
        end = start + latency if isinstance(latency, (int, float)) else max(ends, default=start)
        root = Span(trace["id"], trace["id"], None, trace.get("name") or "", "CHAIN", start, end, number)
        root.input, root.output = as_text(trace.get("input"), QUESTION_KEYS), as_text(trace.get("output"), ANSWER_KEYS)
        root.session = trace.get("sessionId")
        root.attributes = {**_mapping(trace.get("metadata")), **{k: trace.get(k) for k in TRACE_FIELDS}}
        spans.append(root)
        for observation in observations:
            spans.append(_observation(trace["id"], observation, number, trace["id"]))
    return _capped(spans, cap, problems)


def _observation_page(items: list[Any], problems: Problems) -> list[Span]:
    spans = []
    for number, item in enumerate(items):
        if not isinstance(item, dict) or not item.get("traceId") or not item.get("id"):
            problems.add("Langfuse observations without a trace id or id, skipped", f"record {number}")
            continue
        span = _observation(item["traceId"], item, number, None)
        span.session = item.get("sessionId")
        span.attributes = {**span.attributes, **{k: item.get(k) for k in TRACE_FIELDS if item.get(k) is not None}}
        spans.append(span)
    return spans


def _mapping(value: Any) -> dict[str, Any]:
    """Langfuse metadata: an object, or (the public API of recent versions) that object as a JSON string."""
    if isinstance(value, str) and value.startswith("{"):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


def _observation(trace_id: str, item: dict[str, Any], number: int, root: str | None) -> Span:
    """One observation; ``root``: the parent of those without one (the trace's own span), or None."""
    kind = LANGFUSE_KINDS.get(item.get("type") or "", str(item.get("type") or "SPAN").upper())
    if kind != LLM and "retriev" in (item.get("name") or "").lower():
        kind = RETRIEVER  # older exports: a SPAN named for its retriever
    start = _seconds(item.get("startTime"))
    span = Span(
        trace_id,
        item.get("id") or "",
        item.get("parentObservationId") or root,
        item.get("name") or "",
        kind,
        start,
        _seconds(item.get("endTime")) or start,
        number,
    )
    span.input, span.output = as_text(item.get("input"), QUESTION_KEYS), as_text(item.get("output"), ANSWER_KEYS)
    span.documents = _documents(item.get("output")) if kind == RETRIEVER else Passages()
    usage = item.get("usageDetails") or item.get("usage") or {}
    span.tokens_in = usage.get("input", item.get("inputUsage", item.get("promptTokens")))
    span.tokens_out = usage.get("output", item.get("outputUsage", item.get("completionTokens")))
    span.model = item.get("model")
    span.error = item.get("level") == "ERROR"
    span.attributes = _mapping(item.get("metadata"))
    return span


def read_langsmith(source: Path, cap: int, problems: Problems, _names: list[str], _answer: str) -> list[Span]:
    """Runs, one per line, with their nested ``child_runs``; a broken line is counted and skipped."""
    spans: list[Span] = []
    with open(source, "rb") as handle:
        for line, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                run = orjson.loads(text)
            except orjson.JSONDecodeError:
                check_json_depth(
                    text.decode("utf-8", "replace"), path=str(source), first_line=line
                )  # too deep: refused
                problems.add("lines that are not JSON, skipped", f"line {line}")
                continue
            if not is_langsmith(run):
                problems.add("lines that are not a LangSmith run, skipped", f"line {line}")
                continue
            stack = [(run, run.get("trace_id") or run.get("id"))]
            while stack:
                item, trace_id = stack.pop()
                spans.append(_run(item, str(trace_id), line))
                stack.extend((child, trace_id) for child in item.get("child_runs") or () if isinstance(child, dict))
    return _capped(spans, cap, problems)


def _run(run: dict[str, Any], trace_id: str, line: int) -> Span:
    kind = LANGSMITH_KINDS.get(run.get("run_type") or "", str(run.get("run_type") or "chain").upper())
    extra = run.get("extra") if isinstance(run.get("extra"), dict) else {}
    metadata = extra.get("metadata") if isinstance(extra.get("metadata"), dict) else {}
    parent = run.get("parent_run_id")
    start = _seconds(run.get("start_time"))
    span = Span(
        trace_id,
        str(run.get("id")),
        str(parent) if parent else None,
        run.get("name") or "",
        kind,
        start,
        _seconds(run.get("end_time")) or start,
        line,
        error=bool(run.get("error")),
        attributes=metadata,
    )
    inputs, outputs = run.get("inputs") or {}, run.get("outputs") or {}
    span.input = as_text(inputs, QUESTION_KEYS)
    span.output = _generation_text(outputs) if kind == LLM else as_text(outputs, ANSWER_KEYS)
    span.documents = _documents(outputs) if kind == RETRIEVER else Passages()
    usage = ((outputs.get("llm_output") or {}).get("token_usage") or {}) if isinstance(outputs, dict) else {}
    span.tokens_in = run.get("prompt_tokens", usage.get("prompt_tokens"))
    span.tokens_out = run.get("completion_tokens", usage.get("completion_tokens"))
    params = extra.get("invocation_params") if isinstance(extra.get("invocation_params"), dict) else {}
    span.model = metadata.get("ls_model_name") or params.get("model") or params.get("model_name")
    span.session = next((str(metadata[k]) for k in SESSION_KEYS if metadata.get(k) is not None), None)
    return span


def _generation_text(outputs: Any) -> str | None:
    """An LLM run's answer: the last generation's text (LangChain's LLMResult), else the outputs as text."""
    generations = outputs.get("generations") if isinstance(outputs, dict) else None
    if isinstance(generations, list) and generations:
        last = generations[-1][-1] if isinstance(generations[-1], list) and generations[-1] else generations[-1]
        if isinstance(last, dict) and isinstance(last.get("text"), str):
            return last["text"]
    return as_text(outputs, ANSWER_KEYS)


def _seconds(stamp: Any) -> float:
    """An ISO 8601 time (a trailing Z allowed) or epoch seconds -> seconds since the epoch; 0.0 when absent."""
    if isinstance(stamp, (int, float)):
        return float(stamp)
    if not isinstance(stamp, str) or not stamp:
        return 0.0
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if moment.tzinfo is None:  # LangSmith writes UTC without an offset
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _capped(spans: list[Span], cap: int, problems: Problems) -> list[Span]:
    """Texts longer than ``cap`` characters are cut, and counted."""
    for span in spans:
        for name in ("input", "output"):
            text = getattr(span, name)
            if text is not None and len(text) > cap:
                setattr(span, name, text[:cap])
                problems.add(f"attributes longer than {cap} characters, cut", f"span {span.span_id}")
        contents = span.documents.contents
        for index, content in enumerate(contents):
            if isinstance(content, str) and len(content) > cap:
                contents[index] = content[:cap]
                problems.add(f"attributes longer than {cap} characters, cut", f"span {span.span_id}")
    return spans


def plain_attribute(span: Span, name: str) -> Any:
    """A named attribute of a Langfuse or LangSmith span (its metadata, or the trace's fields)."""
    return span.attributes.get(name)
