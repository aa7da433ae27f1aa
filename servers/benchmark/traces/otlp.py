"""OTLP JSON as the OpenTelemetry Collector's file exporter writes it: ``resourceSpans`` -> ``scopeSpans`` ->
``spans``, one export request per line (JSON Lines) or one per file."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from servers.benchmark.traces import conventions, genai_events
from servers.benchmark.traces.assemble import Traces
from servers.benchmark.traces.spans import LLM, RETRIEVER, Passages, Problems, Span
from ultra_kit.limits.json_files import loads_limited
from ultra_kit.readers import check_json_depth

ERROR_CODES = (2, "STATUS_CODE_ERROR")
_NONE: dict[str, Any] = {}  # the attributes kept when no metadata is named (shared, never written)
_EMPTY = Passages()  # the passages of a span that has none (shared, never written: a reader assigns new ones)
READ_IN_FULL = (LLM, RETRIEVER)  # the spans a record is made of (and the roots, and the answer_span)
READ_BUFFER = 1 << 20  # export lines run to kilobytes: a buffer of many lines saves copying each across reads
if conventions.OI is not None:  # else the extra is missing: read_spans says so
    from servers.benchmark.traces import otlp_json as schema

    KIND = conventions.OI.OPENINFERENCE_SPAN_KIND
    SESSION = conventions.OI.SESSION_ID
    METADATA = conventions.OI.METADATA


def read_spans(
    source: Path, cap: int, problems: Problems, names: list[str], answer_span: str, logs: Path | None = None
) -> Traces:
    """Every span in the file, by trace; a line that is not JSON, or not an export request, is counted and skipped.

    The file is streamed: each line is decoded into typed structs (``otlp_json``) and turned into spans, and
    only the attributes named in ``names`` (and OpenInference's ``metadata`` and the resource's, when names are
    given) are kept. The spans a record is made of (LLM, retriever, parentless, the ``answer_span``) are read
    in full; of the others the ids, kind, status and session, and where their line starts: should one become a
    root (its parent absent from the file), ``complete`` reads that line again. ``logs``: a file of OTLP logs
    written apart from the spans, whose GenAI events are joined to them as those of ``source`` are.
    """
    conventions.require_conventions()
    reading = _Reading(cap, problems, (*names, METADATA) if names else (), answer_span)
    for offset, line, request in _requests(source, problems):
        reading.offset, reading.ids = offset, {}
        for item in request if request.__class__ is list else (request,):
            if item.resourceSpans is not None:
                reading.request(item, line)
            if item.resourceLogs is not None:
                reading.log_events(item.resourceLogs, line)
            if item.resourceSpans is None and item.resourceLogs is None:
                problems.add("lines without resourceSpans (or resourceLogs), skipped", f"line {line}")
    if logs is not None:
        _read_logs(reading, logs)
    reading.attach_events()
    return reading.traces


def _read_logs(reading: _Reading, logs: Path) -> None:
    """The GenAI events of a file of logs (``benchmark.traces.logs``); its problems name that file."""
    problems = reading.problems
    reading.problems = in_logs = _InFile(problems, logs.name)
    try:
        for _, line, request in _requests(logs, in_logs):
            for item in request if request.__class__ is list else (request,):
                if item.resourceLogs is not None:
                    reading.log_events(item.resourceLogs, line)
                else:
                    in_logs.add("lines of benchmark.traces.logs without resourceLogs, skipped", f"line {line}")
    finally:
        reading.problems = problems


class _InFile(Problems):
    """``Problems`` whose examples name the file they were found in (``logs.jsonl line 3``), counted in ``problems``."""

    def __init__(self, problems: Problems, name: str) -> None:
        super().__init__()
        self.problems, self.name = problems, name

    def add(self, reason: str, example: str, count: int = 1) -> None:
        self.problems.add(reason, f"{self.name} {example}", count)


def _requests(source: Path, problems: Problems) -> Iterator[tuple[int, int, Any]]:
    """(byte offset, line, decoded request), streamed: one line is held at a time. A first line that is not
    JSON but opens an object or a list may start one pretty-printed request: then the whole file is that
    request, if it is one (offset -1)."""
    seen_first, decode, offset, nested_decoded = False, schema.DECODER.decode, 0, schema.nested_decoded
    nested_decoded()  # forget a nested value another read on this thread decoded
    with open(source, "rb", buffering=READ_BUFFER) as handle:
        for line, chunk in enumerate(handle, start=1):
            start, offset = offset, offset + len(chunk)
            try:
                decoded = decode(chunk)
            except schema.NOT_OTLP as exc:
                seen_first = True
                problems.add("lines that are not OTLP export requests, skipped", f"line {line}: {exc}")
                continue
            except (schema.NOT_JSON, RecursionError):
                if not chunk.strip():
                    continue
                if not seen_first and chunk.lstrip()[:1] in (b"{", b"["):
                    whole = _whole(source)
                    if whole is not None:
                        yield -1, 1, whole
                        return
                check_json_depth(chunk.decode("utf-8", "replace"), path=str(source), first_line=line)
                problems.add("lines that are not JSON, skipped", f"line {line}")
                seen_first = True
                continue
            seen_first = True
            if nested_decoded():  # the line holds values that can nest (checked so, not by searching every line)
                check_json_depth(chunk.decode("utf-8", "replace"), path=str(source), first_line=line)
            yield start, line, decoded


def _whole(source: Path) -> Any:
    text = source.read_bytes()
    try:
        whole = schema.DECODER.decode(text)
    except (schema.NOT_JSON, RecursionError):
        check_json_depth(text.decode("utf-8", "replace"), path=str(source))
        return None
    check_json_depth(text.decode("utf-8", "replace"), path=str(source))  # one pretty-printed request
    return whole


class _Reading:
    """The spans read so far, and how to read the next ones."""

    def __init__(self, cap: int, problems: Problems, keep: tuple[str, ...], answer_span: str) -> None:
        self.traces: Traces = {}  # trace id -> its spans, grouped as they are read
        self.cap, self.problems, self.keep, self.answer_span = cap, problems, keep, answer_span
        self.offset = 0  # where the line being read starts
        self.ids: dict[str, str] = {}  # the line's ids and names, each held once (a trace id is on all its spans)
        self.sessions: dict[str, str] = {}  # each session and span name held once
        self.names: dict[str, str] = {}
        self.events: dict[tuple[str, str], list[genai_events.Event]] = {}  # (trace id, span id) -> its GenAI events

    def log_events(self, resource_logs: list[schema.ResourceLogs], line: int) -> None:
        """Keep the GenAI events among the log records (``genai_events``), by the span they belong to."""
        for scope_logs in (s for r in resource_logs for s in r.scopeLogs or ()):
            for record in scope_logs.logRecords or ():
                attrs = _attributes(record.attributes)
                name = genai_events.event_name(record, attrs)
                if name is None:
                    continue  # another log record: not ours
                trace_id, span_id = _hex(record.traceId, 32), _hex(record.spanId, 16)
                if not trace_id or not span_id:
                    self.problems.add("GenAI events outside any span, skipped", f"line {line}, event '{name}'")
                    continue
                self.events.setdefault((trace_id, span_id), []).append((name, attrs, record.body))

    def attach_events(self) -> None:
        """Fill each span's empty fields from its GenAI events; events whose span is not in the file are counted."""
        if not self.events:
            return
        for span in (span for members in self.traces.values() for span in members):
            found = self.events.pop((span.trace_id, span.span_id), None)
            if found:
                genai_events.fill_from_events(span, found, self.cap, self.problems)
        for (trace_id, span_id), left in self.events.items():
            self.problems.add(
                "GenAI events whose span is not in the file", f"span {span_id} in trace {trace_id}", len(left)
            )

    def request(self, request: schema.Request, line: int) -> None:
        keep, traces, read = self.keep, self.traces, self.span
        member_lists = traces.get
        for resource_spans in request.resourceSpans:
            resource = resource_spans.resource
            resource_attrs = _attributes(resource.attributes) if keep and resource is not None else _NONE
            for scope_spans in resource_spans.scopeSpans or resource_spans.instrumentationLibrarySpans or ():
                for raw in scope_spans.spans or ():
                    span = read(raw, line, resource_attrs)
                    if span is None:
                        continue
                    members = member_lists(span.trace_id)
                    if members is None:
                        traces[span.trace_id] = [span]
                    else:
                        members.append(span)

    def span(self, raw: schema.Span, line: int, resource_attrs: dict[str, Any]) -> Span | None:
        ids = self.ids
        trace_id, span_id, parent = raw.traceId, raw.spanId, raw.parentSpanId
        trace_id = ids.get(trace_id) if trace_id.__class__ is str else None  # a trace id seen before: checked
        if trace_id is None:
            trace_id = _id(raw.traceId, 32)
            if trace_id:
                ids[trace_id] = trace_id
                if raw.traceId.__class__ is str:
                    ids[raw.traceId] = trace_id
        if span_id.__class__ is not str or len(span_id) != 16 or not span_id.islower():
            span_id = _hex(span_id, 16)
        if not trace_id or not span_id:
            self.problems.add("spans without a trace id or span id, skipped", f"line {line}, span '{raw.name}'")
            return None
        span_id = ids.setdefault(span_id, span_id)
        if parent:
            parent = (ids.get(parent) if parent.__class__ is str else None) or _id(parent, 16)
            if parent:
                parent = ids.setdefault(parent, parent)
        else:
            parent = None
        attrs = {kv.key: kv.value for kv in raw.attributes} if raw.attributes else {}  # faster than dict(map(...))
        if raw.events:
            _event_attributes(attrs, raw.events)
        kept = _NONE
        if self.keep:  # named metadata is looked up in what is kept
            kept = {name: attrs[name] for name in self.keep if name in attrs}
            kept["__resource__"] = resource_attrs
        status, name = raw.status, raw.name or ""
        name = self.names.setdefault(name, name) if name.__class__ is str else str(name)
        try:
            start = int(raw.startTimeUnixNano or 0) / 1e9
        except (TypeError, ValueError):
            start = 0.0
        error = status is not None and status.code in ERROR_CODES
        kind = attrs.get(KIND)
        if kind is not None:
            text = kind.stringValue if kind.__class__ is schema.AnyValue else None
            kind = conventions.KINDS.get(text) or str(conventions.value(kind)).upper()
            if kind not in READ_IN_FULL and parent is not None and name != self.answer_span:
                # the rest is read again only if it turns out to be a root (its parent absent from the file)
                session = attrs.get(SESSION)
                if session is not None:
                    text = session.stringValue if session.__class__ is schema.AnyValue else None
                    session = text if text is not None else conventions.value(session)
                    if session.__class__ is str:  # on every span of every turn: held once
                        session = self.sessions.setdefault(session, session)
                return Span(  # its end, too, is read with the rest (``complete``): until then, its start
                    trace_id, span_id, parent, name, kind, start, start, line, None, None, _EMPTY, None, None, None,
                    session, error, kept, self.offset,
                )  # fmt: skip
        try:
            end = int(raw.endTimeUnixNano or 0) / 1e9
        except (TypeError, ValueError):
            end = 0.0
        span = Span(
            trace_id, span_id, parent, name, kind, start, end, line, documents=_EMPTY, error=error, attributes=kept
        )
        if kind is None:
            conventions.fill(span, attrs, self.cap, self.problems)  # GenAI, or no convention
        else:
            conventions.openinference(span, attrs, self.cap, self.problems)
            if span.input.__class__ is str:  # the question (and answer) recur on a trace's spans: held once
                span.input = ids.setdefault(span.input, span.input)
            if span.output.__class__ is str:
                span.output = ids.setdefault(span.output, span.output)
        if span.session.__class__ is str:
            span.session = self.sessions.setdefault(span.session, span.session)
        return span


def _id(identifier: Any, width: int) -> str | None:
    """A trace or span id as lower-case hex (``_hex`` for the unusual ones)."""
    if identifier.__class__ is str and len(identifier) == width and identifier.islower():
        return identifier
    return _hex(identifier, width)


def complete(span: Span, source: Path, cap: int, problems: Problems) -> None:
    """Read what ``span`` left unread (it has become a record's root): its line is decoded again."""
    offset, span.pending = span.pending, None
    if offset < 0:
        request = schema.DECODER.decode(source.read_bytes())
    else:
        with open(source, "rb") as handle:
            handle.seek(offset)
            request = schema.DECODER.decode(handle.readline())
    for item in request if request.__class__ is list else (request,):
        for resource_spans in item.resourceSpans or ():
            for scope_spans in resource_spans.scopeSpans or resource_spans.instrumentationLibrarySpans or ():
                for raw in scope_spans.spans or ():
                    if raw.spanId == span.span_id or _hex(raw.spanId, 16) == span.span_id:
                        attrs = _attributes(raw.attributes)
                        if raw.events:
                            _event_attributes(attrs, raw.events)
                        span.end = _seconds(raw.endTimeUnixNano)
                        conventions.openinference(span, attrs, cap, problems)
                        return


def _attributes(items: list[schema.KeyValue] | None) -> dict[str, Any]:
    """OTLP ``[{"key": k, "value": v}, ...]`` -> ``{k: v}``."""
    return {kv.key: kv.value for kv in items} if items else {}


def _event_attributes(attrs: dict[str, Any], events: list[schema.Event]) -> None:
    """GenAI content may come as span events: their attributes, where the span's own do not have the name."""
    for event in events:
        for key, found in _attributes(event.attributes).items():
            attrs.setdefault(key, found)


def _seconds(nanos: Any) -> float:
    """``startTimeUnixNano`` (a string of digits in JSON, or a number) as seconds; 0.0 when absent or unreadable."""
    try:
        return int(nanos or 0) / 1e9
    except (TypeError, ValueError):
        return 0.0


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
    metadata = conventions.value(attrs.get(METADATA))
    if isinstance(metadata, str) and metadata.startswith("{"):
        try:
            metadata = loads_limited(metadata, path="a span's metadata")
        except ValueError:  # not JSON, or nested deeper than the limit
            metadata = None
    if isinstance(metadata, dict) and name in metadata:
        return metadata[name]
    resource = attrs.get("__resource__") or {}
    return conventions.value(resource[name]) if name in resource else None
