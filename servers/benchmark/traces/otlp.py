"""OTLP JSON as the OpenTelemetry Collector's file exporter writes it: ``resourceSpans`` -> ``scopeSpans`` ->
``spans``, one export request per line (JSON Lines) or one per file."""

from __future__ import annotations

import base64
import gc
from pathlib import Path
from typing import Any

import orjson

from servers.benchmark.traces import conventions
from servers.benchmark.traces.spans import Problems, Span
from ultra_kit.readers import check_json_depth

ERROR_CODES = (2, "STATUS_CODE_ERROR")


def is_otlp(data: Any) -> bool:
    """The parsed content is an OTLP export request (or a list of them)."""
    first = data[0] if isinstance(data, list) and data else data
    return isinstance(first, dict) and isinstance(first.get("resourceSpans"), list)


def read_spans(source: Path, cap: int, problems: Problems, names: list[str]) -> list[Span]:
    """Every span in the file; a line that is not JSON, or not an export request, is counted and skipped.

    Each line is turned into spans as it is parsed, and only the attributes named in ``names`` (and
    OpenInference's ``metadata``) are kept. The cyclic garbage collector is paused meanwhile: the
    reader builds many objects and no cycles, and its passes would cost more than the parsing.
    """
    conventions.require_conventions()
    keep = (*names, "metadata")
    paused = gc.isenabled()
    gc.disable()
    try:
        return _read(source, cap, problems, keep)
    finally:
        if paused:
            gc.enable()


def _read(source: Path, cap: int, problems: Problems, keep: tuple[str, ...]) -> list[Span]:
    spans: list[Span] = []
    with open(source, "rb") as handle:
        text = handle.read()
    if text.lstrip()[:1] == b"{" and b"\n{" not in text.strip():
        chunks = [(1, text)]  # one request in the file, perhaps pretty-printed
    else:
        chunks = list(enumerate(text.split(b"\n"), start=1))
    for line, chunk in chunks:
        if not chunk.strip():
            continue
        try:
            request = orjson.loads(chunk)
        except orjson.JSONDecodeError:
            check_json_depth(chunk.decode("utf-8", "replace"), path=str(source), first_line=line)
            problems.add("lines that are not JSON, skipped", f"line {line}")
            continue
        for item in request if isinstance(request, list) else [request]:
            if not is_otlp(item):
                problems.add("lines without resourceSpans, skipped", f"line {line}")
                continue
            _request_spans(item, line, cap, problems, spans, keep)
    return spans


def _request_spans(
    request: dict[str, Any], line: int, cap: int, problems: Problems, spans: list[Span], keep: tuple[str, ...]
) -> None:
    for resource_spans in request["resourceSpans"]:
        resource = resource_spans.get("resource") or {}
        resource_attrs = {a.get("key"): a.get("value") for a in resource.get("attributes") or ()}
        for scope_spans in resource_spans.get("scopeSpans") or resource_spans.get("instrumentationLibrarySpans") or ():
            for raw in scope_spans.get("spans") or ():
                span = _span(raw, line, cap, problems)
                if span is not None:
                    attrs = span.attributes
                    span.attributes = {name: attrs[name] for name in keep if name in attrs}
                    span.attributes["__resource__"] = resource_attrs
                    spans.append(span)


def _span(raw: dict[str, Any], line: int, cap: int, problems: Problems) -> Span | None:
    trace_id, span_id = _hex(raw.get("traceId"), 32), _hex(raw.get("spanId"), 16)
    if not trace_id or not span_id:
        problems.add("spans without a trace id or span id, skipped", f"line {line}, span '{raw.get('name')}'")
        return None
    attrs = {a["key"]: a.get("value") for a in raw.get("attributes") or ()}
    for event in raw.get("events") or ():  # GenAI content may come as span events
        for attribute in event.get("attributes") or ():
            attrs.setdefault(attribute["key"], attribute.get("value"))
    status = raw.get("status") or {}
    span = Span(
        trace_id,
        span_id,
        _hex(raw.get("parentSpanId"), 16) or None,
        raw.get("name") or "",
        None,
        int(raw.get("startTimeUnixNano") or 0) / 1e9,
        int(raw.get("endTimeUnixNano") or 0) / 1e9,
        line,
        error=status.get("code") in ERROR_CODES,
        attributes=attrs,
    )
    conventions.fill(span, attrs, cap, problems)
    return span


def _hex(identifier: Any, width: int) -> str | None:
    """A trace or span id as hex: OTLP JSON writes hex; protobuf's JSON mapping writes base64."""
    if not identifier or not isinstance(identifier, str):
        return None
    if len(identifier) == width:
        return identifier.lower()
    try:
        return base64.b64decode(identifier, validate=True).hex()
    except ValueError:
        return identifier


def attribute(span: Span, name: str) -> Any:
    """A named attribute of an OTLP span: its own, then its ``metadata`` (OpenInference), then its resource's."""
    attrs = span.attributes
    if name in attrs:
        return conventions.value(attrs[name])
    metadata = conventions.value(attrs.get("metadata"))
    if isinstance(metadata, str) and metadata.startswith("{"):
        metadata = orjson.loads(metadata)
    if isinstance(metadata, dict) and name in metadata:
        return metadata[name]
    resource = attrs.get("__resource__") or {}
    return conventions.value(resource[name]) if name in resource else None
