"""Span attributes -> ``Span`` fields, by OpenInference's conventions or OpenTelemetry's GenAI conventions.

The attribute names come from the official packages (``openinference-semantic-conventions`` and
``opentelemetry-semantic-conventions``: ``pip install 'ultra-eval[traces]'``), not typed by hand.
"""

from __future__ import annotations

import json
from typing import Any

from servers.benchmark.traces.spans import (
    ANSWER_KEYS,
    LLM,
    QUESTION_KEYS,
    RETRIEVER,
    Document,
    Span,
    as_text,
    documents_from,
)
from ultra_base.errors import InputError

try:
    from openinference.semconv.trace import DocumentAttributes as Doc
    from openinference.semconv.trace import MessageAttributes as Msg
    from openinference.semconv.trace import SpanAttributes as OI
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as GenAI
except ImportError:  # pragma: no cover - the extra is missing
    OI = None

OTLP_VALUE_KEYS = ("stringValue", "intValue", "doubleValue", "boolValue", "arrayValue", "kvlistValue", "bytesValue")


def require_conventions() -> None:
    """The semantic-convention packages are installed, or an error that says how to install them."""
    if OI is None:
        raise InputError("reading OTLP traces needs the semantic-convention packages: pip install 'ultra-eval[traces]'")


def value(raw: Any) -> Any:
    """An OTLP ``AnyValue`` ({"stringValue": ...}, {"intValue": "3"}, arrays, key-value lists) as a Python value."""
    if raw.__class__ is not dict:
        return raw
    if "stringValue" in raw:  # the common case first
        return raw["stringValue"]
    for key, inner in raw.items():
        if key == "stringValue" or key == "doubleValue" or key == "boolValue":
            return inner
        if key == "intValue":
            return int(inner)
        if key == "arrayValue":
            return [value(item) for item in inner.get("values", ())]
        if key == "kvlistValue":
            return {kv.get("key"): value(kv.get("value")) for kv in inner.get("values", ())}
        if key == "bytesValue":
            return inner
    return None


def fill(span: Span, attrs: dict[str, Any], cap: int, notes: Any) -> None:
    """Fill ``span``'s fields from its attributes (raw OTLP values); ``kind`` None when no convention matches."""
    kind = attrs.get(OI.OPENINFERENCE_SPAN_KIND)
    if kind is not None:
        span.kind = str(value(kind)).upper()
        _openinference(span, attrs, cap, notes)
    elif any(key.startswith("gen_ai.") for key in attrs):
        _gen_ai(span, attrs, cap, notes)


def _text(raw: Any, cap: int, notes: Any, where: Span) -> str | None:
    if raw is None:
        return None
    text = value(raw)
    if text is None:
        return None
    if text.__class__ is not str:
        text = json.dumps(text, ensure_ascii=False)
    if len(text) > cap:
        notes.add(f"attributes longer than {cap} characters, cut", f"span {where.span_id}")
        return text[:cap]
    return text


def _openinference(span: Span, attrs: dict[str, Any], cap: int, notes: Any) -> None:
    get = attrs.get
    span.input = as_text(_text(get(OI.INPUT_VALUE), cap, notes, span), QUESTION_KEYS)
    output = _text(get(OI.OUTPUT_VALUE), cap, notes, span)
    span.session = value(get(OI.SESSION_ID))
    if span.kind == LLM:
        last = _last_index(attrs, f"{OI.LLM_OUTPUT_MESSAGES}.{{}}.{Msg.MESSAGE_CONTENT}")
        if last is not None:
            output = _text(get(f"{OI.LLM_OUTPUT_MESSAGES}.{last}.{Msg.MESSAGE_CONTENT}"), cap, notes, span)
        span.model = value(get(OI.LLM_MODEL_NAME))
        span.tokens_in = value(get(OI.LLM_TOKEN_COUNT_PROMPT))
        span.tokens_out = value(get(OI.LLM_TOKEN_COUNT_COMPLETION))
    span.output = as_text(output, ANSWER_KEYS)
    if span.kind == RETRIEVER:
        prefix = OI.RETRIEVAL_DOCUMENTS
        index = 0
        while (content := get(f"{prefix}.{index}.{Doc.DOCUMENT_CONTENT}")) is not None or (
            f"{prefix}.{index}.{Doc.DOCUMENT_ID}" in attrs
        ):
            doc_id, score = get(f"{prefix}.{index}.{Doc.DOCUMENT_ID}"), get(f"{prefix}.{index}.{Doc.DOCUMENT_SCORE}")
            span.documents.append(
                Document(
                    _text(content, cap, notes, span),
                    None if doc_id is None else str(value(doc_id)),
                    None if score is None else float(value(score)),
                )
            )
            index += 1
        if any(doc.id is None for doc in span.documents):  # OpenInference-LangChain: the ids are in the output
            from_output = documents_from(output)
            if len(from_output) == len(span.documents):
                for doc, found in zip(span.documents, from_output, strict=True):
                    doc.id = doc.id if doc.id is not None else found.id


def _last_index(attrs: dict[str, Any], pattern: str) -> int | None:
    index = None
    while pattern.format(0 if index is None else index + 1) in attrs:
        index = 0 if index is None else index + 1
    return index


GEN_AI_LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})


def _gen_ai(span: Span, attrs: dict[str, Any], cap: int, notes: Any) -> None:
    """OpenTelemetry GenAI: ``gen_ai.operation.name`` gives the kind; messages are JSON lists of parts."""
    get = attrs.get
    operation = value(get(GenAI.GEN_AI_OPERATION_NAME))
    span.kind = (
        LLM
        if operation in GEN_AI_LLM_OPERATIONS
        else RETRIEVER
        if operation == "retrieval"
        else "AGENT"
        if operation in ("invoke_agent", "invoke_workflow")
        else str(operation or "CHAIN").upper()
    )
    span.input = _message_text(_text(get(GenAI.GEN_AI_INPUT_MESSAGES), cap, notes, span), "user") or _text(
        get(GenAI.GEN_AI_RETRIEVAL_QUERY_TEXT) or get(GenAI.GEN_AI_PROMPT), cap, notes, span
    )
    span.output = _message_text(_text(get(GenAI.GEN_AI_OUTPUT_MESSAGES), cap, notes, span), "assistant") or _text(
        get(GenAI.GEN_AI_COMPLETION), cap, notes, span
    )
    span.model = value(get(GenAI.GEN_AI_RESPONSE_MODEL) or get(GenAI.GEN_AI_REQUEST_MODEL))
    span.tokens_in = value(get(GenAI.GEN_AI_USAGE_INPUT_TOKENS))
    span.tokens_out = value(get(GenAI.GEN_AI_USAGE_OUTPUT_TOKENS))
    span.session = value(get(GenAI.GEN_AI_CONVERSATION_ID))
    documents = _json(_text(get(GenAI.GEN_AI_RETRIEVAL_DOCUMENTS), cap, notes, span))
    for doc in documents if isinstance(documents, list) else ():
        if isinstance(doc, dict):
            score = doc.get("score")
            content = doc.get("content", doc.get("text"))
            span.documents.append(Document(content, _str(doc.get("id")), score if isinstance(score, float) else None))


def _message_text(raw: str | None, role: str) -> str | None:
    """The text parts of the last message with ``role`` in a GenAI messages list (JSON)."""
    messages = _json(raw)
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == role:
            parts = message.get("parts") or []
            texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
            return "".join(t for t in texts if isinstance(t, str)) or None
    return None


def _json(raw: str | None) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def _str(raw: Any) -> str | None:
    return None if raw is None else str(raw)
