"""OpenTelemetry GenAI traces written by the official instrumentation (opentelemetry-instrumentation-openai-v2 and
opentelemetry-util-genai, OpenAI client against a server on 127.0.0.1; scripts/make_genai_traces.py): the
message content in log events only (the current details event, or the earlier event per message), or on the spans
only, read back equal to what each call saw."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from servers.benchmark.tools.data import get_data
from tests.conftest import ROOT
from tests.support.together import at_once
from ultra_base.errors import InputError, confined_reads

pytest.importorskip("opentelemetry.instrumentation.openai_v2", reason="pip install 'ultra-eval[traces]'")

FIELDS = {
    "q": "question",
    "a": "answer",
    "c": "contexts",
    "i": "context_ids",
    "sc": "context_scores",
    "m": "model",
    "ti": "tokens_in",
    "to": "tokens_out",
    "s": "session_id",
    "t": "turn",
    "md": "metadata",
    "l": "latency_s",
}


def make(out: Path, content: str) -> list[dict[str, Any]]:
    expected = out.with_suffix(".expected.json")
    command = [sys.executable, "scripts/make_genai_traces.py", "--content", content, "--out", str(out)]
    subprocess.run([*command, "--expected", str(expected)], check=True, capture_output=True, cwd=ROOT, timeout=300)
    return json.loads(expected.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[dict[str, Any]]]]:
    folder = tmp_path_factory.mktemp("genai")
    made = at_once({c: (lambda c=c: make(folder / f"{c}.jsonl", c)) for c in ("events", "spans", "messages")})
    return {content: (folder / f"{content}.jsonl", seen) for content, seen in made.items()}


def read(path: Path, **traces: Any) -> dict[str, Any]:
    spec = {"path": str(path), "key_map": FIELDS, "traces": {"metadata": ["app_version"], **traces}}
    return get_data(benchmark=spec)


def check(result: dict[str, Any], seen: list[dict[str, Any]], *, passages: bool) -> None:
    for variable, field in (("q", "question"), ("a", "answer"), ("m", "model"), ("ti", "tokens_in"),
                            ("to", "tokens_out"), ("s", "session_id")):  # fmt: skip
        assert result[variable] == [s[field] for s in seen], field
    assert result["t"] == [1, 2, 1, 2, 1, 2, 1, 2]  # four conversations of two turns
    assert result["md"] == [{"app_version": s["app_version"]} for s in seen]
    assert all(0 < latency <= s["wall_s"] for latency, s in zip(result["l"], seen, strict=True))
    if passages:
        assert (result["c"], result["i"], result["sc"]) == tuple(
            [s[k] for s in seen] for k in ("contexts", "context_ids", "context_scores")
        )
    else:  # EVENT_ONLY: the retrieval span carries no documents, and there is no retrieval event
        assert result["c"] == [[]] * len(seen)
    assert result["data_info"]["notes"] == {}


def test_content_in_log_events(written, tmp_path: Path) -> None:
    path, seen = written["events"]
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [next(iter(json.loads(line))) for line in lines] == ["resourceSpans", "resourceLogs"]
    check(read(path), seen, passages=False)
    logs_first = tmp_path / "logs_first.jsonl"  # the logs may come before the spans they belong to
    logs_first.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    check(read(logs_first), seen, passages=False)
    spans_only = tmp_path / "spans_only.jsonl"  # without its events the file has no question and no answer
    spans_only.write_text(lines[0] + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="without a question"):
        read(spans_only)


def test_logs_in_their_own_file(written, tmp_path: Path) -> None:
    """The Collector's logs pipeline may write to a file of its own: ``traces.logs`` joins its events to the spans;
    its problems name that file; other formats refuse it."""
    path, seen = written["events"]
    spans, logs = path.read_text(encoding="utf-8").splitlines()
    (tmp_path / "spans.jsonl").write_text(spans + "\n", encoding="utf-8")
    (tmp_path / "logs.jsonl").write_text(logs + "\n{broken\n" + spans + "\n", encoding="utf-8")
    result = read(tmp_path / "spans.jsonl", logs=str(tmp_path / "logs.jsonl"))
    for variable, field in (("q", "question"), ("a", "answer"), ("ti", "tokens_in")):
        assert result[variable] == [s[field] for s in seen]
    assert result["data_info"]["notes"] == {
        "lines that are not JSON, skipped (e.g. logs.jsonl line 2)": 1,
        "lines of benchmark.traces.logs without resourceLogs, skipped (e.g. logs.jsonl line 3)": 1,
    }
    with pytest.raises(InputError, match="without a question"):
        read(tmp_path / "spans.jsonl")  # the same spans without their logs
    with (
        confined_reads(),
        pytest.raises(InputError, match=r"traces.logs resolves to /etc/hostname, outside the folders"),
    ):
        read(tmp_path / "spans.jsonl", logs="/etc/hostname")  # confined to the read roots in a tool call, as path is
    with pytest.raises(InputError, match=r"benchmark.traces.logs: no such file"):
        read(tmp_path / "spans.jsonl", logs=str(tmp_path / "absent.jsonl"))
    with pytest.raises(InputError, match=r"logs.jsonl: the file is [\d,]+ bytes, more than benchmark.max_bytes"):
        get_data(benchmark={"path": str(tmp_path / "spans.jsonl"), "key_map": FIELDS, "max_bytes": len(spans) + 1,
                            "traces": {"logs": str(tmp_path / "logs.jsonl")}})  # fmt: skip
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"id": "r1", "run_type": "chain", "inputs": {"question": "Q?"}, "outputs": {"output": "A."}}\n')
    with pytest.raises(InputError, match="read beside OTLP spans only, not format langsmith"):
        read(runs, logs=str(tmp_path / "logs.jsonl"))


def test_events_without_their_spans_are_counted(written, tmp_path: Path) -> None:
    path, seen = written["events"]
    spans, logs = path.read_text(encoding="utf-8").splitlines()
    request = json.loads(spans)
    for scope in request["resourceSpans"][0]["scopeSpans"]:
        scope["spans"] = [
            s
            for s in scope["spans"]
            if s["traceId"] != json.loads(logs)["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["traceId"]
        ]
    cut = tmp_path / "cut.jsonl"
    cut.write_text(json.dumps(request) + "\n" + logs + "\n", encoding="utf-8")
    result = read(cut)
    assert result["q"] == [s["question"] for s in seen[1:]]
    ((note, count),) = result["data_info"]["notes"].items()
    assert note.startswith("GenAI events whose span is not in the file (e.g. span ") and count == 1


def test_content_on_spans(written) -> None:
    path, seen = written["spans"]
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1  # no log records
    check(read(path), seen, passages=True)


def test_content_in_per_message_events(written, tmp_path: Path) -> None:
    """The earlier conventions (openai-v2 without the opt-in): the question only in a ``gen_ai.user.message``
    event's body, the answer only in a ``gen_ai.choice`` event's; the system message's event is not the question."""
    path, seen = written["messages"]
    spans, logs = path.read_text(encoding="utf-8").splitlines()
    records = [r for s in json.loads(logs)["resourceLogs"] for scope in s["scopeLogs"] for r in scope["logRecords"]]
    assert [r["eventName"] for r in records] == ["gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"] * 8
    assert not any(s["question"] in spans or s["answer"] in spans for s in seen)  # the content is in the events only
    check(read(path), seen, passages=False)
    spans_only = tmp_path / "spans_only.jsonl"
    spans_only.write_text(spans + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="without a question"):
        read(spans_only)
