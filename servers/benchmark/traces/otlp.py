"""OTLP JSON as the OpenTelemetry Collector's file exporter writes it: ``resourceSpans`` -> ``scopeSpans`` ->
``spans``, one export request per line (JSON Lines) or one per file."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from servers.benchmark.traces import conventions
from servers.benchmark.traces.spans import Problems, Span
from ultra_kit.readers import check_json_depth

ERROR_CODES = (2, "STATUS_CODE_ERROR")
_NONE: dict[str, Any] = {}  # the attributes kept when no metadata is named (shared, never written)


def is_otlp(data: Any) -> bool:
    """The parsed content is an OTLP export request (or a list of them)."""
    first = data[0] if isinstance(data, list) and data else data
    return isinstance(first, dict) and isinstance(first.get("resourceSpans"), list)


def read_spans(source: Path, cap: int, problems: Problems, names: list[str]) -> list[Span]:
    """Every span in the file; a line that is not JSON, or not an export request, is counted and skipped.

    The file is streamed: each line is turned into spans as it is parsed, and only the attributes named in
    ``names`` (and OpenInference's ``metadata`` and the resource's, when names are given) are kept.
    """
    conventions.require_conventions()
    return _read(source, cap, problems, (*names, "metadata") if names else ())


def _read(source: Path, cap: int, problems: Problems, keep: tuple[str, ...]) -> list[Span]:
    spans: list[Span] = []
    for line, request in _requests(source, problems):
        for item in request if isinstance(request, list) else (request,):
            if not is_otlp(item):
                problems.add("lines without resourceSpans, skipped", f"line {line}")
                continue
            _request_spans(item, line, cap, problems, spans, keep)
    return spans


def _requests(source: Path, problems: Problems) -> Iterator[tuple[int, Any]]:
    """(line, parsed line), streamed: one line is held at a time. A first line that is not JSON but opens an
    object or a list may start one pretty-printed request: then the whole file is that request, if it parses."""
    seen_first = False
    with open(source, "rb") as handle:
        for line, chunk in enumerate(handle, start=1):
            try:
                parsed = orjson.loads(chunk)
            except orjson.JSONDecodeError:
                if not chunk.strip():
                    continue
                if not seen_first and chunk.lstrip()[:1] in (b"{", b"["):
                    whole = _whole(source)
                    if whole is not None:
                        yield 1, whole
                        return
                check_json_depth(chunk.decode("utf-8", "replace"), path=str(source), first_line=line)
                problems.add("lines that are not JSON, skipped", f"line {line}")
                seen_first = True
                continue
            seen_first = True
            yield line, parsed


def _whole(source: Path) -> Any:
    try:
        return orjson.loads(source.read_bytes())
    except orjson.JSONDecodeError:
        return None


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
                    if keep:  # named metadata is looked up in what is kept
                        attrs = span.attributes
                        span.attributes = {name: attrs[name] for name in keep if name in attrs}
                        span.attributes["__resource__"] = resource_attrs
                    else:
                        span.attributes = _NONE
                    spans.append(span)


def _span(raw: dict[str, Any], line: int, cap: int, problems: Problems) -> Span | None:
    trace_id, span_id = raw.get("traceId"), raw.get("spanId")
    if trace_id.__class__ is not str or len(trace_id) != 32 or not trace_id.islower():
        trace_id = _hex(trace_id, 32)
    if span_id.__class__ is not str or len(span_id) != 16 or not span_id.islower():
        span_id = _hex(span_id, 16)
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
        _parent(raw.get("parentSpanId")),
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


def _parent(identifier: Any) -> str | None:
    if identifier.__class__ is str and len(identifier) == 16 and identifier.islower():
        return identifier
    return _hex(identifier, 16) or None


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
