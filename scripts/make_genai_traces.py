"""Write OpenTelemetry GenAI traces by running the official GenAI instrumentation against a local server.

    python scripts/make_genai_traces.py --content events --out genai.jsonl --expected genai.expected.json
    python scripts/make_genai_traces.py --content spans --out genai_spans.jsonl

Each question is one workflow (``opentelemetry-util-genai``'s TelemetryHandler: an ``invoke_workflow`` root
with the conversation id, and a ``retrieval`` span) around a chat call that the OpenAI client makes to an
OpenAI-compatible server on 127.0.0.1, under ``opentelemetry-instrumentation-openai-v2`` (the current GenAI
conventions, ``gen_ai_latest_experimental``). The message content is captured

* ``events``: in log events only (``EVENT_ONLY``), never on the spans: one
  ``gen_ai.client.inference.operation.details`` event per call, holding the input and output messages;
* ``spans``: on the spans only (``SPAN_ONLY``): messages and retrieved documents as span attributes;
* ``messages``: the earlier conventions, which openai-v2 still writes on its path without the opt-in
  (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``): a log event per message,
  ``gen_ai.system.message``, ``gen_ai.user.message`` and ``gen_ai.choice``, nothing on the spans.
  ``opentelemetry-util-genai`` 1.1b0 (the one openai-v2 2.4b0 imports) opts in whatever the environment says,
  so the script turns off that check in openai-v2's module: the events are what that path of openai-v2 writes.

Spans and log records go through the SDK's in-memory exporters and are written as OTLP JSON, one export
request per line (``resourceSpans`` lines, then ``resourceLogs`` lines, as one Collector file exporter in both
pipelines writes them). ``--expected`` writes what each call saw. Needs ``pip install 'ultra-eval[traces]'``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from make_traces import ANSWERS, CORPUS, TRAFFIC, answer_for, words

MODEL = "table-chat"


REWRITE = "Rewrite as a search query: "  # a request so prefixed is answered with the query (make_chat_traces.py)
FAIL_HEADER = "X-Test-Fail"  # a request with this header is answered 500 (make_chat_traces.py)


class ChatServer(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: the table's answer to the last user message, with token counts."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.headers.get(FAIL_HEADER):
            self.send_error(500, "failing on request")
            return
        question = request["messages"][-1]["content"]
        answer = question.removeprefix(REWRITE).rstrip("?").lower() if question.startswith(REWRITE) else None
        answer = answer or answer_for(question)
        reply = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}}],
            "usage": {
                "prompt_tokens": len(question.split()),
                "completion_tokens": len(answer.split()),
                "total_tokens": len(question.split()) + len(answer.split()),
            },
        }
        body = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def retrieve(question: str) -> list[dict[str, Any]]:
    """The two passages sharing the most words with the question."""
    found = words(question)
    ranked = sorted(CORPUS.items(), key=lambda item: (-len(found & words(item[1])), item[0]))[:2]
    return [{"id": doc_id, "content": text, "score": float(len(found & words(text)))} for doc_id, text in ranked]


def hex_ids(request: dict[str, Any], groups: str, items: str) -> dict[str, Any]:
    """The protobuf JSON mapping writes ids in base64; the Collector's file exporter writes hex."""
    for resource in request.get(groups, []):
        for scope in resource.get("scope" + groups[len("resource") :], []):
            for item in scope.get(items, []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if item.get(key):
                        item[key] = base64.b64decode(item[key]).hex()
    return request


def run(content: str, out: Path) -> list[dict[str, Any]]:
    if content == "messages":  # openai-v2's path without the opt-in: content "true", one event per message
        os.environ.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
        import opentelemetry.instrumentation.openai_v2 as openai_v2

        openai_v2.is_experimental_mode = lambda: False  # util-genai 1.1b0 answers True whatever the opt-in says
    else:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        mode = "EVENT_ONLY" if content == "events" else "SPAN_ONLY"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = mode
        os.environ["OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT"] = "true" if content == "events" else "false"
    from google.protobuf.json_format import MessageToDict
    from openai import OpenAI
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as GenAI
    from opentelemetry.util.genai.handler import TelemetryHandler

    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tracer_provider, logger_provider = TracerProvider(), LoggerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    handler = TelemetryHandler(tracer_provider=tracer_provider, logger_provider=logger_provider)
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="unused", max_retries=0)
    seen = []
    try:
        for session, version, question in TRAFFIC:
            started = time.time()
            with handler.workflow("rag") as workflow:
                workflow.attributes.update({GenAI.GEN_AI_CONVERSATION_ID: session, "app_version": version})
                with handler.retrieval(data_source_id="corpus") as retrieval:
                    retrieval.query_text = question
                    retrieval.documents = passages = retrieve(question)
                context = " ".join(p["content"] for p in passages)
                reply = client.chat.completions.create(
                    model=MODEL,
                    messages=[
                        {"role": "system", "content": f"Answer from: {context}"},
                        {"role": "user", "content": question},
                    ],
                )
            seen.append(
                {
                    "question": question,
                    "answer": reply.choices[0].message.content,
                    "session_id": session,
                    "app_version": version,
                    "model": MODEL,
                    "tokens_in": reply.usage.prompt_tokens,
                    "tokens_out": reply.usage.completion_tokens,
                    "contexts": [p["content"] for p in passages],
                    "context_ids": [p["id"] for p in passages],
                    "context_scores": [p["score"] for p in passages],
                    "wall_s": time.time() - started,
                }
            )
    finally:
        server.shutdown()
    finished = list(spans.get_finished_spans())
    records = list(logs.get_finished_logs())
    lines = [json.dumps(hex_ids(MessageToDict(encode_spans(finished)), "resourceSpans", "spans"))]
    if records:
        lines.append(json.dumps(hex_ids(MessageToDict(encode_logs(records)), "resourceLogs", "logRecords")))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert set(ANSWERS.values()) >= {s["answer"] for s in seen}
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--content", choices=("events", "spans", "messages"), default="events")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--expected", type=Path, help="also write what each call saw, one object per question")
    args = parser.parse_args()
    seen = run(args.content, args.out)
    if args.expected:
        args.expected.write_text(json.dumps(seen, indent=1), encoding="utf-8")
    print(f"{args.out}: {len(seen)} traces")


if __name__ == "__main__":
    main()
