"""Write production-like traces by running a real RAG chain under the real OpenInference instrumentation.

    python scripts/make_traces.py --out data/traces/rag_traces.jsonl            # LlamaIndex, OTLP JSON
    python scripts/make_traces.py --framework langchain --out x.jsonl          # LangChain, OTLP JSON
    python scripts/make_traces.py --framework langchain --export langsmith --out runs.jsonl
    python scripts/make_traces.py --framework langchain --export langfuse --out observations.json
    python scripts/make_traces.py --qrels data/traces/qrels.trec --traces data/traces/rag_traces.jsonl

The chain is a vector index over a tiny corpus with fake (deterministic, offline) embeddings and a
fake LLM that answers from a table. The spans go through the OpenTelemetry SDK to an in-memory exporter
and are written as the Collector's file exporter writes them (one export request per line, hex ids).
``--expected`` also writes what the chain itself saw (question, answer, passages, session, time), which
the tests compare with what ``benchmark.get_data`` reads back. The LangSmith and Langfuse exports are the
LangChain tracer's runs in those SDKs' own models (``langsmith.schemas.Run``; langfuse's ``ObservationV2``),
serialised by the SDKs. Needs ``pip install 'ultra-eval[traces]'``.

``--qrels`` writes the relevance judgments of an OTLP traces file this script wrote (it reads the file and writes
no traces; nothing to install): every corpus passage judged for every trace, keyed by the trace id and the passage
id the retriever records (what ``custom.rankings_to_run`` puts in its run); see ``judgments``.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import time
from pathlib import Path
from typing import Any

CORPUS = {
    "fr": "Paris is the capital of France.",
    "de": "Berlin is the capital of Germany.",
    "it": "Rome is the capital of Italy.",
    "eiffel": "The Eiffel Tower in Paris was finished in 1889.",
    "rhine": "The Rhine flows through Germany and the Netherlands.",
    "tiber": "The Tiber flows through Rome.",
}
ANSWERS = {
    "capital of France": "Paris.",
    "capital of Germany": "Berlin.",
    "capital of Italy": "Rome.",
    "Eiffel Tower": "It was finished in 1889.",
    "Rhine": "Through Germany and the Netherlands.",
    "Tiber": "Through Rome.",
}
# (session, app version, question): sessions of several turns, two versions of the app
TRAFFIC = [
    ("s1", "v1", "What is the capital of France?"),
    ("s1", "v1", "When was the Eiffel Tower finished?"),
    ("s2", "v1", "What is the capital of Germany?"),
    ("s2", "v1", "Which countries does the Rhine flow through?"),
    ("s3", "v2", "What is the capital of Italy?"),
    ("s3", "v2", "Where does the Tiber flow?"),
    ("s4", "v2", "What is the capital of France?"),
    ("s4", "v2", "What is the capital of Germany?"),
]


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def vector(text: str) -> list[float]:
    """A deterministic bag-of-words embedding over the corpus vocabulary (offline, no model)."""
    vocabulary = sorted(set().union(*(words(t) for t in CORPUS.values())))
    found = words(text)
    return [1.0 if w in found else 0.0 for w in vocabulary] + [0.1]


def answer_for(prompt: str) -> str:
    question = prompt.rsplit("Query:", 1)[-1] if "Query:" in prompt else prompt.rsplit("Q:", 1)[-1]
    return next((a for key, a in ANSWERS.items() if key in question), "I don't know.")


def otlp_lines(spans: list[Any]) -> str:
    """The spans as one OTLP JSON export request (hex trace and span ids, as the Collector writes)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = MessageToDict(encode_spans(spans))
    for resource in request.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(request, separators=(",", ":"))


def llamaindex_engine() -> Any:
    from llama_index.core import Settings, VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.schema import TextNode

    class WordEmbedding(BaseEmbedding):
        def _get_text_embedding(self, text: str) -> list[float]:
            return vector(text)

        def _get_query_embedding(self, query: str) -> list[float]:
            return vector(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return vector(query)

    class TableLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="table-llm")

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            return CompletionResponse(text=answer_for(prompt))

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            yield CompletionResponse(text=answer_for(prompt), delta=answer_for(prompt))

    Settings.llm, Settings.embed_model = TableLLM(), WordEmbedding(model_name="words")
    index = VectorStoreIndex([TextNode(text=text, id_=doc_id) for doc_id, text in CORPUS.items()])
    engine = index.as_query_engine(similarity_top_k=2)

    def ask(question: str) -> dict[str, Any]:
        response = engine.query(question)
        nodes = response.source_nodes
        return {
            "answer": str(response),
            "contexts": [n.node.get_content() for n in nodes],
            "context_ids": [n.node.node_id for n in nodes],
            "context_scores": [n.score for n in nodes],
        }

    return ask


def langchain_chain() -> Any:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough
    from langchain_core.vectorstores import InMemoryVectorStore

    class WordEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [vector(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return vector(text)

    store = InMemoryVectorStore(WordEmbeddings())
    store.add_documents([Document(page_content=text, id=doc_id) for doc_id, text in CORPUS.items()])
    retriever = store.as_retriever(search_kwargs={"k": 2})
    seen: dict[str, Any] = {}

    def remember(docs: list[Any]) -> list[Any]:
        seen["docs"] = docs
        return docs

    prompt = ChatPromptTemplate.from_template("Context: {context}\nQ: {question}")
    chain = (
        {"context": retriever | RunnableLambda(remember), "question": RunnablePassthrough()}
        | prompt
        | RunnableLambda(lambda p: FakeListChatModel(responses=[answer_for(p.to_string())]).invoke(p))
        | StrOutputParser()
    )

    def ask(question: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = chain.invoke(question, config=config)
        docs = seen["docs"]
        return {"answer": answer, "contexts": [d.page_content for d in docs], "context_ids": [d.id for d in docs]}

    return ask


def run_otlp(framework: str, out: Path) -> list[dict[str, Any]]:
    from openinference.instrumentation import using_metadata, using_session
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if framework == "llamaindex":
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        ask = llamaindex_engine()  # the index is built before instrumenting: its spans are not traffic
        LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    else:
        from openinference.instrumentation.langchain import LangChainInstrumentor

        ask = langchain_chain()
        LangChainInstrumentor().instrument(tracer_provider=provider)
    seen, lines = [], []
    for session, version, question in TRAFFIC:
        exporter.clear()
        started = time.time()
        with using_session(session), using_metadata({"app_version": version}):
            result = ask(question)
        seen.append(
            {
                "question": question,
                "session_id": session,
                "app_version": version,
                **result,
                "wall_s": time.time() - started,
            }
        )
        lines.append(otlp_lines(list(exporter.get_finished_spans())))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return seen


def record_runs() -> tuple[list[Any], list[dict[str, Any]]]:
    """The LangChain chain answers the traffic under LangChain's own tracer, which records each question's runs
    (the langsmith SDK's RunTree, child runs nested); what the chain saw, per question."""
    from langchain_core.tracers.base import BaseTracer

    class Recorder(BaseTracer):
        def __init__(self) -> None:
            super().__init__()
            self.runs: list[Any] = []

        def _persist_run(self, run: Any) -> None:
            self.runs.append(run)

    ask, recorder, seen = langchain_chain(), Recorder(), []
    for session, version, question in TRAFFIC:
        started = time.time()
        result = ask(question, {"callbacks": [recorder], "metadata": {"session_id": session, "app_version": version}})
        seen.append(
            {
                "question": question,
                "session_id": session,
                "app_version": version,
                **result,
                "wall_s": time.time() - started,
            }
        )
    return recorder.runs, seen


def run_langsmith(out: Path) -> list[dict[str, Any]]:
    """Each root run as the langsmith SDK's ``schemas.Run`` (what the runs API returns) with its child runs
    nested, one per line: a runs export."""
    from langsmith.schemas import Run

    def exported(run: Any) -> Any:
        fields = run.model_dump(include=set(Run.model_fields) - {"child_runs"})
        return Run(**fields, child_runs=[exported(child) for child in run.child_runs])

    runs, seen = record_runs()
    out.write_text("".join(json.dumps(exported(run).model_dump(mode="json")) + "\n" for run in runs), encoding="utf-8")
    return seen


LANGFUSE_TYPES = {"chain": "CHAIN", "retriever": "RETRIEVER", "llm": "GENERATION", "chat_model": "GENERATION"}


def run_langfuse(out: Path) -> list[dict[str, Any]]:
    """The runs as Langfuse observations: the langfuse SDK's own models (``ObservationV2`` in an
    ``ObservationsV2Response``, what ``GET /api/public/v2/observations`` returns), serialised by the SDK."""
    from langfuse.api import ObservationsV2Meta, ObservationsV2Response, ObservationV2

    observations = []

    def add(run: Any, trace_id: str) -> None:
        metadata = dict((run.extra or {}).get("metadata") or {})
        observations.append(
            ObservationV2(
                id=str(run.id),
                trace_id=trace_id,
                start_time=run.start_time,
                end_time=run.end_time,
                project_id="ultra-eval",
                parent_observation_id=str(run.parent_run_id) if run.parent_run_id else None,
                type=LANGFUSE_TYPES.get(run.run_type, "SPAN"),
                name=run.name,
                session_id=metadata.pop("session_id", None),
                input=run.inputs,
                output=run.outputs,
                metadata=metadata,
            )
        )
        for child in run.child_runs:
            add(child, trace_id)

    runs, seen = record_runs()
    for run in runs:
        add(run, str(run.trace_id or run.id))
    page = ObservationsV2Response(data=observations, meta=ObservationsV2Meta(cursor=None))
    out.write_text(page.json(), encoding="utf-8")
    return seen


def places(text: str) -> set[str]:
    """The proper names of a passage: its capitalised words but the article."""
    return set(re.findall(r"\b[A-Z][a-z]+", text)) - {"The"}


def judgments(question: str) -> dict[str, int]:
    """Every corpus passage's grade for ``question``, by construction: 2 for the passage holding the ``ANSWERS``
    key the fake LLM answers it by (the passage that answers it), 1 for a passage naming a place that one names
    (on the topic, no answer: Paris for the Eiffel Tower), 0 for the others."""
    (key,) = [key for key in ANSWERS if key in question]
    (answering,) = [doc for doc, text in CORPUS.items() if key in text]
    return {
        doc: 2 if doc == answering else int(bool(places(text) & places(CORPUS[answering])))
        for doc, text in CORPUS.items()
    }


def trace_read(line: str) -> tuple[str, str]:
    """(trace id, question) of one line of an OTLP file written by ``run_otlp`` (KeyError, ValueError if not)."""
    spans = [span for r in json.loads(line)["resourceSpans"] for scope in r["scopeSpans"] for span in scope["spans"]]
    attributes = [{a["key"]: next(iter(a["value"].values())) for a in span["attributes"]} for span in spans]
    (root,) = [a for span, a in zip(spans, attributes, strict=True) if not span.get("parentSpanId")]
    (trace,) = {span["traceId"] for span in spans}
    ids = {v for a in attributes for k, v in a.items() if re.fullmatch(r"retrieval\.documents\.\d+\.document\.id", k)}
    if not ids or not ids <= set(CORPUS):
        raise ValueError(f"retrieved passages {sorted(ids)} are not this script's corpus's")
    judgments(root["input.value"])  # the question is one of TRAFFIC's
    return trace, root["input.value"]


def traces_read(path: Path) -> list[tuple[str, str]]:
    """(trace id, question) per line of an OTLP file written by ``run_otlp``: the question is the root span's
    ``input.value``; every passage id its retriever spans record must be one of the corpus's."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            found.append(trace_read(line))
        except (KeyError, TypeError, ValueError, StopIteration) as error:
            raise SystemExit(
                f"{path}:{number}: expected one trace of this script's questions over its corpus, with one root span "
                f"({type(error).__name__}: {error})"
            ) from None
    return found


def write_qrels(traces: Path, out: Path) -> None:
    """The TREC qrels (``trace_id 0 passage_id grade``) of every trace in ``traces``, in its order."""
    rows = [f"{trace} 0 {doc} {grade}\n" for trace, question in traces_read(traces)
            for doc, grade in judgments(question).items()]  # fmt: skip
    out.write_text("".join(rows), encoding="utf-8")
    print(f"{out}: {len(rows)} judgments of {len(rows) // len(CORPUS)} traces")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--framework", choices=("llamaindex", "langchain"), default="llamaindex")
    parser.add_argument("--export", choices=("otlp", "langsmith", "langfuse"), default="otlp")
    parser.add_argument("--out", type=Path, help="the traces file to write")
    parser.add_argument("--expected", type=Path, help="also write what the chain saw, one object per question")
    parser.add_argument("--qrels", type=Path, help="write the judgments of the OTLP file --traces instead")
    parser.add_argument("--traces", type=Path, help="with --qrels: the OTLP traces file this script wrote")
    args = parser.parse_args()
    if args.qrels:
        if not args.traces or args.out:
            parser.error("--qrels reads --traces and writes no traces (no --out)")
        if not args.traces.is_file():
            parser.error(f"--traces {args.traces}: no such file")
        write_qrels(args.traces, args.qrels)
        return
    if not args.out:
        parser.error("--out is required (or --qrels with --traces)")
    exports = {"langsmith": run_langsmith, "langfuse": run_langfuse}
    seen = exports[args.export](args.out) if args.export in exports else run_otlp(args.framework, args.out)
    if args.expected:
        args.expected.write_text(json.dumps(seen, indent=1), encoding="utf-8")
    print(f"{args.out}: {len(seen)} traces")


if __name__ == "__main__":
    main()
