"""Hand-made trace files for what real instrumentation does not write: broken lines, orphans, missing
parents, cycles, huge attributes, unknown conventions; and a Langfuse export in the shape of the traces API that
langfuse SDK 5 no longer has (the OTel GenAI conventions are read from real instrumentation in test_genai.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servers.benchmark.tools.data import get_data
from ultra_base.errors import InputError

TRACE = "0af7651916cd43dd8448eb211c80319c"


def attr(key: str, value: Any) -> dict[str, Any]:
    kind = "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}


def span(span_id: str, parent: str | None, kind: str | None, trace: str = TRACE, **attrs: Any) -> dict[str, Any]:
    attributes = [attr(k if "." in k else k.replace("_", "."), v) for k, v in attrs.items()]  # input_value: input.value
    if kind:
        attributes.append(attr("openinference.span.kind", kind))
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent or "",
        "name": kind or "http",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001500000000",
        "attributes": attributes,
    }


def request(*spans: dict[str, Any]) -> str:
    return json.dumps(
        {
            "resourceSpans": [
                {"resource": {"attributes": [attr("service.version", "1.4")]}, "scopeSpans": [{"spans": list(spans)}]}
            ]
        }
    )


def answered(trace: str, root: str = "a" * 16) -> str:
    return request(span(root, None, "CHAIN", trace, input_value="Q?", output_value="A."))


def read(path: Path, **settings: Any) -> dict[str, Any]:
    key_map = {"q_ls": "question", "pred_ls": "answer", "id_ls": "trace_id"}
    return get_data(benchmark={"path": str(path), "key_map": key_map, "format": "otlp", **settings})


def test_each_problem_is_counted_with_an_example(tmp_path: Path) -> None:
    lines = [
        answered("1" * 32),
        "{not json",
        request(span("b" * 16, None, "CHAIN", trace="")),  # a span without its trace
        request(span("c" * 16, "d" * 16, "CHAIN", "2" * 32, input_value="Q2?", output_value="A2.")),  # parent absent
        request(span("e" * 16, "f" * 16, "CHAIN", "3" * 32), span("f" * 16, "e" * 16, "LLM", "3" * 32)),  # a cycle
        request(span("9" * 16, None, None, "4" * 32, http_method="GET")),  # no convention known
        request(span("8" * 16, None, "CHAIN", "5" * 32, input_value="x" * 50, output_value="A5.")),
        '{"foo": 1}',  # JSON, but not an export request
        "[1, 2]",
        request(repeated := span("7" * 16, None, "CHAIN", "6" * 32, input_value="Q6?", output_value="A6.")),
        request(repeated),  # the same span exported twice
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = read(path, traces={"max_attribute_chars": 20})
    assert result["id_ls"] == ["1" * 32, "2" * 32, "5" * 32, "6" * 32]
    assert result["q_ls"][2] == "x" * 20
    info = result["data_info"]
    assert info["notes"] == {
        "lines that are not JSON, skipped (e.g. line 2)": 1,
        "spans without a trace id or span id, skipped (e.g. line 3, span 'CHAIN')": 1,
        f"spans whose parent is not in the file (e.g. span {'c' * 16} in trace {'2' * 32})": 1,
        f"attributes longer than 20 characters, cut (e.g. span {'8' * 16})": 1,
        "lines without resourceSpans (or resourceLogs), skipped (e.g. line 8)": 1,
        "lines that are not OTLP export requests, skipped (e.g. line 9: Expected `object`, got `int` - at `$[0]`)": 1,
        f"spans repeated in their trace (same span id), kept once (e.g. span {'7' * 16})": 1,
    }
    assert info["dropped_reasons"] == {
        f"traces whose spans' parents form a cycle (e.g. trace {'3' * 32})": 1,
        f"traces with no span of a known convention (OpenInference, GenAI) (e.g. trace {'4' * 32})": 1,
    }
    assert (info["total_rows"], info["kept_rows"], info["dropped_rows"]) == (6, 4, 2)


def test_errors_only_keeps_the_traces_with_a_failed_span(tmp_path: Path) -> None:
    """A trace whose LLM span failed (status ERROR) while its root still answered has ``error`` true; ``errors_only``
    keeps it and counts the others; when no trace failed, the error names the filter."""
    failed = span("c" * 16, "b" * 16, "LLM", "2" * 32, output_value="partial")
    failed["status"] = {"code": "STATUS_CODE_ERROR", "message": "rate limited"}
    lines = [
        answered("1" * 32),
        request(span("b" * 16, None, "CHAIN", "2" * 32, input_value="Q?", output_value="A."), failed),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fields = {"id_ls": "trace_id", "e": "error"}
    every = get_data(benchmark={"path": str(path), "key_map": fields})
    assert (every["id_ls"], every["e"]) == (["1" * 32, "2" * 32], [False, True])
    result = get_data(benchmark={"path": str(path), "key_map": fields, "filters": {"errors_only": True}})
    assert result["id_ls"] == ["2" * 32]
    assert result["data_info"]["dropped_reasons"] == {"filtered out (errors_only)": 1}
    path.write_text(lines[0] + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"\(filtered out \(errors_only\): 1\); no record passes benchmark.filters"):
        get_data(benchmark={"path": str(path), "key_map": fields, "filters": {"errors_only": True}})


def test_no_usable_trace_fails_naming_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(request(span("a" * 16, None, "CHAIN", input_value="Q?")) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"t.jsonl: no record kept: read 1 record .*without an answer"):
        read(path)
    path.write_text("{broken\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"no otlp span read \(lines that are not JSON, skipped \(e.g. line 1\): 1\)"):
        read(path)


def test_answer_span_and_resource_metadata(tmp_path: Path) -> None:
    """A trace with a rewriting LLM call and an answering one takes the answer from the named span."""
    path = tmp_path / "t.jsonl"
    root = span("a" * 16, None, "CHAIN", input_value="Q?", output_value="final")
    rewrite = span("b" * 16, "a" * 16, "LLM", output_value="rewritten Q", **{"llm.token_count.prompt": 7})
    rewrite["name"] = "rewrite"
    answer = span("c" * 16, "a" * 16, "LLM", output_value="the answer", **{"llm.token_count.prompt": 5})
    answer["name"], answer["endTimeUnixNano"] = "answer", "1700000002000000000"
    path.write_text(request(root, rewrite, answer) + "\n", encoding="utf-8")
    result = read(path, traces={"answer_span": "answer", "metadata": ["service.version"]})
    assert result["pred_ls"] == ["the answer"]
    full = get_data(
        benchmark={
            "path": str(path),
            "key_map": {"t": "tokens_in", "m": "metadata", "l": "latency_s"},
            "traces": {"metadata": ["service.version"]},
        }
    )
    assert (full["t"], full["m"], full["l"]) == ([12], [{"service.version": "1.4"}], [1.5])


def test_langfuse_export(tmp_path: Path) -> None:
    """The shape of Langfuse's trace API (GET /api/public/traces/{id}: observations as objects)."""
    traces = [
        {
            "id": "t1",
            "timestamp": "2025-03-01T10:00:00.000Z",
            "latency": 2.5,
            "sessionId": "u7",
            "input": {"question": "Capital of Italy?"},
            "output": "Rome.",
            "release": "v3",
            "metadata": {"tier": "pro"},
            "observations": [
                {
                    "id": "o1",
                    "type": "SPAN",
                    "name": "retriever",
                    "startTime": "2025-03-01T10:00:00.100Z",
                    "endTime": "2025-03-01T10:00:00.400Z",
                    "parentObservationId": None,
                    "output": [
                        {"page_content": "Rome is the capital of Italy.", "metadata": {"id": "it", "score": 0.9}}
                    ],
                },
                {
                    "id": "o2",
                    "type": "GENERATION",
                    "name": "llm",
                    "model": "gpt-x",
                    "startTime": "2025-03-01T10:00:00.500Z",
                    "endTime": "2025-03-01T10:00:02.400Z",
                    "usageDetails": {"input": 40, "output": 2},
                    "output": "Rome.",
                },
            ],
        },
        {"id": "t2", "timestamp": "2025-03-01T11:00:00Z", "input": "no answer", "observations": []},
    ]
    path = tmp_path / "langfuse.json"
    path.write_text(json.dumps(traces), encoding="utf-8")
    fields = {
        "q": "question",
        "a": "answer",
        "c": "contexts",
        "i": "context_ids",
        "s": "context_scores",
        "m": "model",
        "t": "tokens_in",
        "n": "session_id",
        "l": "latency_s",
        "x": "metadata",
    }
    result = get_data(benchmark={"path": str(path), "key_map": fields, "traces": {"metadata": ["release", "tier"]}})
    got = {k: v[0] for k, v in result.items() if k != "data_info"}
    assert got == {
        "q": "Capital of Italy?",
        "a": "Rome.",
        "c": ["Rome is the capital of Italy."],
        "i": ["it"],
        "s": [0.9],
        "m": "gpt-x",
        "t": 40,
        "n": "u7",
        "l": 2.5,
        "x": {"release": "v3", "tier": "pro"},
    }
    assert result["data_info"]["dropped_reasons"] == {"traces without an answer (no output) (e.g. trace t2)": 1}


def test_bad_settings_are_named(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(answered("1" * 32) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"benchmark.sample has unknown keys \['size'\]"):
        read(path, sample={"size": 3})
    with pytest.raises(InputError, match="benchmark.sample.strategy must be one of random, stratified, recent"):
        read(path, sample={"n": 1, "strategy": "best"})
    with pytest.raises(InputError, match="benchmark.filters.since must be an ISO 8601 time"):
        read(path, filters={"since": "yesterday"})
    # a field a setting names that no record has is a typo: dedup would keep one record, group_by make no groups
    with pytest.raises(InputError, match=r"field 'questoin' \(benchmark.dedup\) is in no record; line 1 has fields"):
        read(path, dedup="questoin")
    with pytest.raises(InputError, match=r"'metadata.app_version' \(benchmark.group_by\) is in no record; .*\(a "
                       r"trace's metadata holds the attributes named in benchmark.traces.metadata"):  # fmt: skip
        read(path, group_by="metadata.app_version")  # traces.metadata names no attribute
    with pytest.raises(InputError, match=r"'metadata.tier' \(benchmark.sample.by\) is in no record"):
        read(path, sample={"n": 1, "strategy": "stratified", "by": "metadata.tier"})
    named = read(path, traces={"metadata": ["service.version"]}, group_by="metadata.service.version")
    assert named["group_ls"] == ["1.4"]  # the resource's attribute: a name with dots is found whole
    kept = read(path, traces={"metadata": ["service.version"]}, filters={"equals": {"metadata.service.version": "1.4"}})
    assert kept["id_ls"] == ["1" * 32]
