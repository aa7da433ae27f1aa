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
    Passages,
    Span,
    as_text,
    documents_from,
)
from ultra_base.errors import InputError
from ultra_kit.limits.json_files import loads_limited

try:
    from openinference.semconv.trace import DocumentAttributes as Doc
    from openinference.semconv.trace import MessageAttributes as Msg
    from openinference.semconv.trace import MessageContentAttributes as Part
    from openinference.semconv.trace import OpenInferenceSpanKindValues
    from openinference.semconv.trace import SpanAttributes as OI
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as GenAI
    from opentelemetry.semconv._incubating.attributes.event_attributes import EVENT_NAME  # noqa: F401 - events

    from servers.benchmark.traces.otlp_json import AnyValue, Nested  # needs msgspec

    KINDS = {name: kind.value for kind in OpenInferenceSpanKindValues for name in (kind.value, kind.value.lower())}
except ImportError:  # pragma: no cover - the extra is missing
    OI = None

OTLP_VALUE_KEYS = ("stringValue", "intValue", "doubleValue", "boolValue", "arrayValue", "kvlistValue", "bytesValue")


def require_conventions() -> None:
    """The semantic-convention packages are installed, or an error that says how to install them."""
    if OI is None:
        raise InputError("reading OTLP traces needs the semantic-convention packages: pip install 'ultra-eval[traces]'")


def value(raw: Any) -> Any:
    """An OTLP ``AnyValue`` (decoded, or as JSON: {"stringValue": ...}, {"intValue": "3"}, arrays, key-value
    lists) as a Python value."""
    if raw.__class__ is AnyValue:
        if raw.stringValue is not None:  # the common cases first
            return raw.stringValue
        if raw.intValue is not None:
            return int(raw.intValue)
        return _value_of(raw.__getattribute__, raw.__struct_fields__)
    if raw.__class__ is not dict:
        return raw
    if "stringValue" in raw:
        return raw["stringValue"]
    return _value_of(raw.get, raw)


def _value_of(get: Any, keys: Any) -> Any:
    for key in keys:
        inner = get(key)
        if inner is None:
            continue
        if key == "stringValue" or key == "boolValue" or key == "bytesValue":
            return inner
        if key == "intValue":
            return int(inner)
        if key == "doubleValue":
            return float(inner)  # "NaN", "Infinity" as the protobuf JSON mapping writes them
        items = inner.values if inner.__class__ is Nested else inner.get("values")  # decoded, or a dict in one
        if key == "arrayValue":
            return [value(item) for item in items or ()]
        if key == "kvlistValue":
            return {kv.get("key"): value(kv.get("value")) for kv in items or ()}
    return None


def fill(span: Span, attrs: dict[str, Any], cap: int, notes: Any) -> None:
    """Fill ``span``'s fields from its attributes (raw OTLP values); ``kind`` None when no convention matches."""
    kind = attrs.get(OI.OPENINFERENCE_SPAN_KIND)
    if kind is not None:
        span.kind = str(value(kind)).upper()
        openinference(span, attrs, cap, notes)
    elif any(key.startswith("gen_ai.") for key in attrs):
        gen_ai(span, attrs, cap, notes)


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


class _Keys:
    """OpenInference's indexed attribute names (``retrieval.documents.3.document.id``), built once per index."""

    def __init__(self) -> None:
        self.documents: list[tuple[str, str, str]] = []
        self.outputs: list[str] = []
        self.inputs: list[tuple[str, str, str]] = []

    def document(self, index: int) -> tuple[str, str, str]:
        while len(self.documents) <= index:
            prefix = f"{OI.RETRIEVAL_DOCUMENTS}.{len(self.documents)}."
            names = (Doc.DOCUMENT_CONTENT, Doc.DOCUMENT_ID, Doc.DOCUMENT_SCORE)
            self.documents.append(tuple(prefix + name for name in names))  # type: ignore[arg-type]
        return self.documents[index]

    def input_message(self, index: int) -> tuple[str, str, str]:
        """The role, the content and the first text part of ``llm.input_messages.<index>``."""
        while len(self.inputs) <= index:
            prefix = f"{OI.LLM_INPUT_MESSAGES}.{len(self.inputs)}."
            first_part = f"{prefix}{Msg.MESSAGE_CONTENTS}.0.{Part.MESSAGE_CONTENT_TEXT}"
            self.inputs.append((prefix + Msg.MESSAGE_ROLE, prefix + Msg.MESSAGE_CONTENT, first_part))
        return self.inputs[index]

    def output_message(self, index: int) -> str:
        while len(self.outputs) <= index:
            self.outputs.append(f"{OI.LLM_OUTPUT_MESSAGES}.{len(self.outputs)}.{Msg.MESSAGE_CONTENT}")
        return self.outputs[index]


KEYS = _Keys()


def openinference(span: Span, attrs: dict[str, Any], cap: int, notes: Any) -> None:
    """Fill ``span`` (its ``kind`` already set) from OpenInference attributes."""
    get = attrs.get
    raw = get(OI.INPUT_VALUE)
    text = raw.stringValue if raw.__class__ is AnyValue else None  # ``_string``, its common case inline
    if text.__class__ is not str or len(text) > cap:
        text = _text(raw, cap, notes, span)
    if text.__class__ is str and text[:1] != "{":
        span.input = text
    elif span.kind == LLM and (asked := _last_user_message(attrs, cap, notes, span)) is not None:
        span.input = asked  # input.value holds the request's JSON (or nothing): the question is the last user message
    elif text is not None:
        span.input = as_text(text, QUESTION_KEYS)
    raw = get(OI.SESSION_ID)
    if raw is not None:
        span.session = value(raw)
    raw = get(OI.OUTPUT_VALUE)
    output = raw.stringValue if raw.__class__ is AnyValue else None
    if output.__class__ is not str or len(output) > cap:
        output = _text(raw, cap, notes, span)
    kind = span.kind
    if kind == LLM:
        index = 0
        while KEYS.output_message(index) in attrs:
            index += 1
        if index:
            output = _string(get(KEYS.output_message(index - 1)), cap, notes, span)
        span.model = value(get(OI.LLM_MODEL_NAME))
        span.tokens_in = value(get(OI.LLM_TOKEN_COUNT_PROMPT))
        span.tokens_out = value(get(OI.LLM_TOKEN_COUNT_COMPLETION))
    if output is not None:  # ``as_text`` keeps a string that holds no JSON object as it is
        span.output = output if output.__class__ is str and output[:1] != "{" else as_text(output, ANSWER_KEYS)
    if kind == RETRIEVER:
        _documents(span, attrs, output, cap, notes)


def _last_user_message(attrs: dict[str, Any], cap: int, notes: Any, span: Span) -> str | None:
    """The text of the last ``user`` message in ``llm.input_messages`` (its content, or its first text part)."""
    index, found = 0, None
    while True:
        role_key, content_key, part_key = KEYS.input_message(index)
        if role_key not in attrs:
            break
        if value(attrs[role_key]) == "user":
            found = attrs.get(content_key) or attrs.get(part_key)
        index += 1
    return None if found is None else _string(found, cap, notes, span)


def _string(raw: Any, cap: int, notes: Any, where: Span) -> str | None:
    """``_text`` with the common case (a string value within the cap) first."""
    text = raw.stringValue if raw.__class__ is AnyValue else None
    if text.__class__ is str and len(text) <= cap:
        return text
    return _text(raw, cap, notes, where)


def _documents(span: Span, attrs: dict[str, Any], output: str | None, cap: int, notes: Any) -> None:
    get, index, keys = attrs.get, 0, KEYS.documents
    span.documents = passages = Passages()
    add_content, add_id, add_score = passages.contents.append, passages.ids.append, passages.scores.append
    while True:
        content_key, id_key, score_key = keys[index] if index < len(keys) else KEYS.document(index)
        content, doc_id = get(content_key), get(id_key)
        if content is None and doc_id is None and id_key not in attrs:
            break
        score = get(score_key)
        if score is not None:
            score = score.doubleValue if score.__class__ is AnyValue else None
            if score.__class__ is not float:
                score = float(value(get(score_key)))
        if doc_id is not None:
            doc_id = doc_id.stringValue if doc_id.__class__ is AnyValue else None
            if doc_id.__class__ is not str:
                doc_id = str(value(get(id_key)))
        if content is not None:  # ``_string``, its common case inline
            text = content.stringValue if content.__class__ is AnyValue else None
            content = text if text.__class__ is str and len(text) <= cap else _text(content, cap, notes, span)
        add_content(content)
        add_id(doc_id)
        add_score(score)
        index += 1
    ids = passages.ids
    if None in ids:  # OpenInference-LangChain: the ids are in the output
        found = documents_from(output).ids
        if len(found) == len(ids):
            ids[:] = [doc_id if doc_id is not None else other for doc_id, other in zip(ids, found, strict=True)]


if OI is not None:  # the operations of the GenAI conventions that are an LLM call, a retrieval, an agent
    _OPERATION = GenAI.GenAiOperationNameValues
    GEN_AI_LLM_OPERATIONS = frozenset(
        op.value for op in (_OPERATION.CHAT, _OPERATION.TEXT_COMPLETION, _OPERATION.GENERATE_CONTENT)
    )
    GEN_AI_RETRIEVAL = _OPERATION.RETRIEVAL.value
    GEN_AI_AGENT_OPERATIONS = frozenset(op.value for op in (_OPERATION.INVOKE_AGENT, _OPERATION.INVOKE_WORKFLOW))


def gen_ai(span: Span, attrs: dict[str, Any], cap: int, notes: Any) -> None:
    """OpenTelemetry GenAI: ``gen_ai.operation.name`` gives the kind; messages are JSON lists of parts."""
    get = attrs.get
    operation = value(get(GenAI.GEN_AI_OPERATION_NAME))
    span.kind = (
        LLM
        if operation in GEN_AI_LLM_OPERATIONS
        else RETRIEVER
        if operation == GEN_AI_RETRIEVAL
        else "AGENT"
        if operation in GEN_AI_AGENT_OPERATIONS
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
    if isinstance(documents, list):
        span.documents = Passages()
    for doc in documents if isinstance(documents, list) else ():
        if isinstance(doc, dict):
            score = doc.get("score")
            content = doc.get("content", doc.get("text"))
            span.documents.add(content, _str(doc.get("id")), score if isinstance(score, float) else None)


def _message_text(raw: str | None, role: str) -> str | None:
    """The text parts of the last message with ``role`` in a GenAI messages list (JSON: a span attribute holds it
    as a string; an event's structured value arrives here as its JSON)."""
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
        return loads_limited(raw, path="a span attribute") if raw else None
    except ValueError:  # not JSON, or nested deeper than the limit
        return None


def _str(raw: Any) -> str | None:
    return None if raw is None else str(raw)
