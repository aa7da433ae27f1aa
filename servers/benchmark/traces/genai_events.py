"""OpenTelemetry GenAI events: the message content an instrumentation records as log records (OTLP
``resourceLogs``) beside its spans, joined to their span by trace and span id.

* ``gen_ai.client.inference.operation.details`` (the current conventions): its attributes are the call's
  (``gen_ai.input.messages``, ``gen_ai.output.messages``, model, tokens), read as a span's GenAI attributes;
* the earlier per-message events: ``gen_ai.user.message`` (its body's ``content``: the question) and
  ``gen_ai.choice`` (its body's ``message.content``: the answer).

What the span itself says wins; an event only fills what the span left empty. The attribute names come from
``opentelemetry-semantic-conventions``; its Python package (0.66b2) has no constants for event names, so the
four names below are the conventions' own, checked by the tests against what the official instrumentation
(``opentelemetry-util-genai``, used by ``opentelemetry-instrumentation-openai-v2``) writes.
"""

from __future__ import annotations

from typing import Any

from servers.benchmark.traces import conventions
from servers.benchmark.traces.spans import Span

INFERENCE_DETAILS = "gen_ai.client.inference.operation.details"
USER_MESSAGE, CHOICE = "gen_ai.user.message", "gen_ai.choice"
GEN_AI_PREFIX = "gen_ai."
FIELDS = ("input", "output", "model", "tokens_in", "tokens_out", "session")

Event = tuple[str, dict[str, Any], Any]  # (event name, attributes, body)


def event_name(record: Any, attrs: dict[str, Any]) -> str | None:
    """A log record's event name: OTLP's ``eventName``, else its ``event.name`` attribute (older SDKs)."""
    name = record.eventName or conventions.value(attrs.get(conventions.EVENT_NAME))
    return name if isinstance(name, str) and name.startswith(GEN_AI_PREFIX) else None


def fill_from_events(span: Span, events: list[Event], cap: int, notes: Any) -> None:
    """Fill what ``span`` left empty from its GenAI events (in the order they were read)."""
    scratch = Span(span.trace_id, span.span_id, None, span.name, None, span.start, span.end, span.line)
    for name, attrs, body in events:
        if name == INFERENCE_DETAILS:
            conventions.gen_ai(scratch, attrs, cap, notes)
        elif name == USER_MESSAGE:
            scratch.input = _content(conventions.value(body)) or scratch.input
        elif name == CHOICE:
            message = conventions.value(body)
            scratch.output = _content(message.get("message") if isinstance(message, dict) else None) or scratch.output
    for field in FIELDS:
        if getattr(span, field) is None and getattr(scratch, field) is not None:
            setattr(span, field, getattr(scratch, field))
    if span.kind is None:
        span.kind = scratch.kind
    if not span.documents and scratch.documents:
        span.documents = scratch.documents


def _content(message: Any) -> str | None:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) and content else None
