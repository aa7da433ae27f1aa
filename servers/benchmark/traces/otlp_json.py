"""The OTLP JSON trace (and logs) export request as typed structs (msgspec): one pass from bytes to the fields the
reader uses, with no dict built per span, attribute or value; unknown fields are skipped unread.

The structure (``resourceSpans`` -> ``scopeSpans`` -> ``spans``, attributes as ``{key, value: AnyValue}``) is
OpenTelemetry's ``ExportTraceServiceRequest`` in the protobuf JSON mapping. Leaves are typed loosely
(``Any``), so a producer's odd scalar never costs the line; only a wrong structure does.
"""

from __future__ import annotations

import threading
from typing import Any

import msgspec


class _Decoded(threading.local):
    nested = False  # a nested value was decoded on this thread since it was last looked at (a class default: no miss)


_DECODED = _Decoded()


class Nested(msgspec.Struct, gc=False):
    """An ``arrayValue`` or ``kvlistValue`` (``{"values": [...]}``, its items left as dicts): the only values that
    can nest. Decoding one marks the thread, so a line's depth is checked only when it holds one (``nested_decoded``).
    """

    values: Any = None

    def __post_init__(self) -> None:
        _DECODED.nested = True


def nested_decoded() -> bool:
    """A nested value was decoded on this thread since the last call."""
    if _DECODED.nested:
        _DECODED.nested = False
        return True
    return False


class AnyValue(msgspec.Struct, gc=False):
    """One of: a string, an int (JSON writes it as a string), a double, a bool, an array, a key-value list, bytes."""

    stringValue: Any = None  # OTLP's field names
    intValue: Any = None
    doubleValue: Any = None
    boolValue: Any = None
    arrayValue: Nested | None = None  # values: [AnyValue as dicts]
    kvlistValue: Nested | None = None  # values: [{"key", "value"} as dicts]
    bytesValue: Any = None


class KeyValue(msgspec.Struct, gc=False):
    key: str = ""
    value: AnyValue | None = None


class Status(msgspec.Struct, gc=False):
    code: Any = None  # its message is not read: left undeclared, msgspec skips it


class Event(msgspec.Struct, gc=False):
    name: Any = None
    attributes: list[KeyValue] | None = None


class Span(msgspec.Struct, gc=False):
    traceId: Any = None
    spanId: Any = None
    parentSpanId: Any = None
    name: Any = None
    startTimeUnixNano: Any = None
    endTimeUnixNano: Any = None
    attributes: list[KeyValue] | None = None
    events: list[Event] | None = None
    status: Status | None = None


class ScopeSpans(msgspec.Struct, gc=False):
    spans: list[Span] | None = None


class Resource(msgspec.Struct, gc=False):
    attributes: list[KeyValue] | None = None


class ResourceSpans(msgspec.Struct, gc=False):
    resource: Resource | None = None
    scopeSpans: list[ScopeSpans] | None = None
    instrumentationLibrarySpans: list[ScopeSpans] | None = None  # before OTLP 0.15


class LogRecord(msgspec.Struct, gc=False):
    """A log record; GenAI events are log records with an ``eventName`` (``genai_events``)."""

    eventName: Any = None
    traceId: Any = None
    spanId: Any = None
    body: AnyValue | None = None
    attributes: list[KeyValue] | None = None


class ScopeLogs(msgspec.Struct, gc=False):
    logRecords: list[LogRecord] | None = None


class ResourceLogs(msgspec.Struct, gc=False):
    scopeLogs: list[ScopeLogs] | None = None


class Request(msgspec.Struct, gc=False):
    """A trace export request, or a logs export request (a Collector file exporter in both pipelines writes both)."""

    resourceSpans: list[ResourceSpans] | None = None
    resourceLogs: list[ResourceLogs] | None = None


DECODER = msgspec.json.Decoder(Request | list[Request])
NOT_JSON = msgspec.DecodeError  # raised for text that is not JSON; ValidationError (a subclass): not OTLP
NOT_OTLP = msgspec.ValidationError
