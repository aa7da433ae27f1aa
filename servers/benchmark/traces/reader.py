"""The trace formats as ``benchmark`` reads them: file -> spans -> records, with the ``benchmark.traces`` settings."""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path
from typing import Any

from servers.benchmark.traces import otlp
from servers.benchmark.traces.assemble import Record, Traces, by_trace, records_from_traces
from servers.benchmark.traces.exports import plain_attribute, read_langfuse, read_langsmith
from servers.benchmark.traces.spans import Problems
from ultra_base.errors import InputError, readable_path
from ultra_kit.readers import check_file_size

READ = {  # file -> spans by trace (otlp: with its logs file)
    "langfuse": lambda *given: by_trace(read_langfuse(*given)),
    "langsmith": lambda *given: by_trace(read_langsmith(*given)),
}
LOOKUP = {"otlp": otlp.attribute, "langfuse": plain_attribute, "langsmith": plain_attribute}


def read_traces(
    fmt: str, source: Path, settings: dict[str, Any], max_bytes: int | None = None
) -> tuple[list[Record], Counter[str], Counter[str]]:
    """Records of the traces in ``source`` (one per answered question), dropped traces and notes by reason.

    ``settings`` is ``benchmark.traces``: answer_span, metadata (names), max_attribute_chars, logs (otlp: a file of
    logs written apart from the spans). ``max_bytes`` (``benchmark.max_bytes``) holds for that file too.
    """
    logs = _logs_file(fmt, settings.get("logs") or "", max_bytes)
    if source.is_dir():
        raise InputError(f"a {fmt} trace file is a file, not a folder", path=str(source))
    cap = settings["max_attribute_chars"]
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise InputError(f"benchmark.traces.max_attribute_chars must be a positive number, not {cap!r}")
    names = settings["metadata"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError(f"benchmark.traces.metadata must be a list of attribute names, not {names!r}")
    paused = gc.isenabled()
    gc.disable()  # many objects and no cycles are built: the collector's passes would cost more than the parsing
    try:
        problems = Problems()
        if fmt == "otlp":
            traces: Traces = otlp.read_spans(source, cap, problems, names, settings["answer_span"] or "", logs)
        else:
            traces = READ[fmt](source, cap, problems, names, settings["answer_span"] or "")
        if not traces:
            found = ", ".join(f"{reason}: {n}" for reason, n in problems.counter().items()) or "the file holds none"
            raise InputError(f"no {fmt} span read ({found})", path=str(source))
        return records_from_traces(
            traces,
            problems,
            answer_span=settings["answer_span"] or "",
            metadata=names,
            lookup=LOOKUP[fmt],
            complete=lambda span: otlp.complete(span, source, cap, problems),
        )
    finally:
        if paused:
            gc.enable()


def _logs_file(fmt: str, logs: Any, max_bytes: int | None) -> Path | None:
    """``benchmark.traces.logs``: None when not given; else the file, confined to the read roots like the spans'."""
    if not isinstance(logs, str):
        raise InputError(f'benchmark.traces.logs must be the path of a file of OTLP logs (or ""), not {logs!r}')
    if not logs:
        return None
    if fmt != "otlp":
        raise InputError(f"benchmark.traces.logs holds OTLP logs, read beside OTLP spans only, not format {fmt}")
    path = readable_path(logs, setting="benchmark.traces.logs")
    if not path.is_file():
        raise InputError("benchmark.traces.logs: no such file", path=str(path))
    if max_bytes is not None:
        check_file_size(path, max_bytes=max_bytes, setting="benchmark.max_bytes")
    return path


def sniff_otlp(head: bytes) -> bool:
    """The file starts like an OTLP export request, of spans or of logs (JSON Lines or one pretty-printed object)."""
    start = head[:4096]  # the first line, or the start of a pretty-printed request
    return head.lstrip()[:1] == b"{" and (b'"resourceSpans"' in start or b'"resourceLogs"' in start)


def sniff_langfuse(head: bytes) -> bool:
    """The file starts like a Langfuse export (a list of traces, or an API page, with observations; or a page of
    observations, each naming its trace and parent)."""
    shaped = b'"observations"' in head or (b'"traceId"' in head and b'"parentObservationId"' in head)
    return head.lstrip()[:1] in (b"[", b"{") and shaped and b'"resourceSpans"' not in head


def sniff_langsmith(head: bytes) -> bool:
    """The first line is a LangSmith run."""
    first = head.split(b"\n", 1)[0]
    return first.lstrip()[:1] == b"{" and b'"run_type"' in first and b'"resourceSpans"' not in first
