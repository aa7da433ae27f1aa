"""Write OpenInference traces of bare chat calls: the OpenAI client, under ``openinference-instrumentation-openai``,
asks an OpenAI-compatible server on 127.0.0.1 (``make_genai_traces.ChatServer``), with no chain around it.

    python scripts/make_chat_traces.py --out chat.jsonl --expected chat.expected.json
    python scripts/make_chat_traces.py --chain --out chain.jsonl   # rewrite, then answer, in one chain span

Each trace is one LLM span, its own root: ``input.value`` is the JSON of the request (every message of the
conversation so far: a system message with the passages, the session's earlier turns, the new question),
``output.value`` the JSON of the response; the messages are also in ``llm.input_messages`` and
``llm.output_messages``, the tokens in ``llm.token_count.*``. The session and the app version come from
OpenInference's ``using_session`` and ``using_metadata``. Spans go through the OpenTelemetry SDK's in-memory
exporter and are written as OTLP JSON, one export request per question (hex ids, as the Collector writes).
``--expected`` writes what each call saw. Needs ``pip install 'ultra-eval[traces]'``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from make_genai_traces import FAIL_HEADER, MODEL, REWRITE, ChatServer, retrieve
from make_traces import TRAFFIC, otlp_lines


@contextlib.contextmanager
def instrumented_client() -> Iterator[tuple[Any, Any, Any]]:
    """(exporter, provider, OpenAI client): the client instrumented by ``openinference-instrumentation-openai``
    into the SDK's in-memory exporter, asking a ``ChatServer`` on 127.0.0.1; both undone at the end."""
    from openai import OpenAI
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield exporter, provider, OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="unused",
                                         max_retries=0)  # fmt: skip
    finally:
        server.shutdown()
        OpenAIInstrumentor().uninstrument()


def run(out: Path) -> list[dict[str, Any]]:
    from openinference.instrumentation import using_metadata, using_session

    seen, lines, history = [], [], {}
    with instrumented_client() as (exporter, _, client):
        for session, version, question in TRAFFIC:
            exporter.clear()
            passages = retrieve(question)
            earlier = history.setdefault(session, [])
            system = {"role": "system", "content": "Answer from: " + " ".join(p["content"] for p in passages)}
            started = time.time()
            with using_session(session), using_metadata({"app_version": version}):
                reply = client.chat.completions.create(
                    model=MODEL, messages=[system, *earlier, {"role": "user", "content": question}]
                )
            answer = reply.choices[0].message.content
            earlier += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
            seen.append(
                {
                    "question": question,
                    "answer": answer,
                    "session_id": session,
                    "app_version": version,
                    "model": MODEL,
                    "tokens_in": reply.usage.prompt_tokens,
                    "tokens_out": reply.usage.completion_tokens,
                    "contexts": [],  # the passages went into the system message: no retriever span records them
                    "context_ids": [],
                    "wall_s": time.time() - started,
                }
            )
            lines.append(otlp_lines(list(exporter.get_finished_spans())))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return seen


FAILING = 3  # in --chain, the fourth question's first answering call fails (HTTP 500) and the app asks again


def run_chain(out: Path) -> list[dict[str, Any]]:
    """``--chain``: each question is a chain span (OpenInference's own tracer, ``openinference_span_kind="chain"``)
    around two chat calls, rewriting the question into a search query, then answering (once failing first); the
    chain's output is the answer with the id of its first passage appended, as the app shows it."""
    import openai
    from openinference.instrumentation import OITracer, TraceConfig, using_metadata, using_session

    seen, lines = [], []
    with instrumented_client() as (exporter, provider, client):
        tracer = OITracer(provider.get_tracer("rag-app"), config=TraceConfig())

        def chat(content: str, **options: Any) -> str:
            messages = [{"role": "user", "content": content}]
            return client.chat.completions.create(model=MODEL, messages=messages, **options).choices[0].message.content

        for index, (session, version, question) in enumerate(TRAFFIC):
            exporter.clear()
            traced = tracer.start_as_current_span("rag", openinference_span_kind="chain")
            with using_session(session), using_metadata({"app_version": version}), traced as root:
                root.set_input(question)
                query = chat(REWRITE + question)
                passages = retrieve(query)
                failed = index == FAILING
                if failed:
                    with contextlib.suppress(openai.InternalServerError):  # the app asks again
                        chat(question, extra_headers={FAIL_HEADER: "1"})
                answer = chat(f"Answer from: {' '.join(p['content'] for p in passages)}\n\nQuery: {question}")
                shown = f"{answer} [{passages[0]['id']}]"
                root.set_output(shown)
            seen.append({"question": question, "query": query, "answer": answer, "shown": shown, "error": failed,
                         "session_id": session, "app_version": version})  # fmt: skip
            lines.append(otlp_lines(list(exporter.get_finished_spans())))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--expected", type=Path, help="also write what each call saw, one object per question")
    parser.add_argument("--chain", action="store_true", help="a chain span around a rewriting and an answering call")
    args = parser.parse_args()
    seen = run_chain(args.out) if args.chain else run(args.out)
    if args.expected:
        args.expected.write_text(json.dumps(seen, indent=1), encoding="utf-8")
    print(f"{args.out}: {len(seen)} traces")


if __name__ == "__main__":
    main()
