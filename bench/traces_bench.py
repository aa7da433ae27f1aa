"""Time reading OTLP JSON traces with ``benchmark.get_data`` against ``json.loads`` alone over the same lines.

    python bench/traces_bench.py [--traces 100000] [--repeats 3] [--seed 7]

The file: one OTLP export request per line (as the Collector's file exporter writes), one trace per
request, five spans per trace (a CHAIN root, a RETRIEVER with 1-8 passages of varying length and
scores, an EMBEDDING, a PROMPT, an LLM with tokens and output messages), OpenInference attributes,
sessions of 1-6 turns, three app versions, and ~1% of traces with an error status. Seeded, varied.

Reported (best of ``--repeats`` by CPU time, user + system, of a fresh subprocess after its imports; wall
time beside it, noisy on a shared machine): ``json.loads`` over every line (the floor: parsing alone, nothing
built), ``get_data`` (read, join, records, key_map) and their ratios (target: CPU at most 2x), the peak
memory (max RSS) of each, and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("the capital river tower bridge museum city north south water built flows century king library").split()  # noqa: SIM905


def text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def attr(key: str, value: object) -> dict:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def trace_line(rng: random.Random, number: int, start_ns: int) -> str:
    trace_id = f"{rng.getrandbits(128):032x}"
    ids = [f"{rng.getrandbits(64):016x}" for _ in range(5)]
    session, version = f"s{number // rng.randint(1, 6)}", rng.choice(["v1", "v2", "v3"])
    question, answer = text(rng, 4, 20) + "?", text(rng, 3, 60) + "."
    common = [attr("session.id", session), attr("metadata", json.dumps({"app_version": version}))]
    docs = []
    for i in range(rng.randint(1, 8)):
        docs += [
            attr(f"retrieval.documents.{i}.document.id", f"doc{rng.randint(0, 10**6)}"),
            attr(f"retrieval.documents.{i}.document.content", text(rng, 10, 120)),
            attr(f"retrieval.documents.{i}.document.score", rng.random()),
        ]
    llm = [
        attr("llm.model_name", rng.choice(["m-small", "m-large"])),
        attr("llm.token_count.prompt", rng.randint(50, 900)),
        attr("llm.token_count.completion", rng.randint(3, 90)),
        attr("llm.output_messages.0.message.role", "assistant"),
        attr("llm.output_messages.0.message.content", answer),
        attr("input.value", question),
    ]
    spans = [
        (ids[0], "", "CHAIN", [attr("input.value", question), attr("output.value", answer)], 0, 900),
        (ids[1], ids[0], "RETRIEVER", [attr("input.value", question), *docs], 10, 200),
        (ids[2], ids[1], "EMBEDDING", [attr("embedding.model_name", "e5")], 12, 40),
        (ids[3], ids[0], "PROMPT", [attr("llm.prompt_template.template", "Context: {c} Q: {q}")], 210, 220),
        (ids[4], ids[0], "LLM", llm, 220, 890),
    ]
    error = rng.random() < 0.01
    request = {
        "resourceSpans": [
            {
                "resource": {"attributes": [attr("service.name", "rag")]},
                "scopeSpans": [
                    {
                        "scope": {"name": "openinference"},
                        "spans": [
                            {
                                "traceId": trace_id,
                                "spanId": sid,
                                "parentSpanId": parent,
                                "name": kind.lower(),
                                "kind": 1,
                                "startTimeUnixNano": str(start_ns + a * 10**6),
                                "endTimeUnixNano": str(start_ns + b * 10**6),
                                "attributes": [*common, *attrs, attr("openinference.span.kind", kind)],
                                "status": {"code": 2 if error and kind == "LLM" else 1},
                            }
                            for sid, parent, kind, attrs, a, b in spans
                        ],
                    }
                ],
            }
        ]
    }
    return json.dumps(request, separators=(",", ":"))


def write_file(path: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    start = 1_700_000_000 * 10**9
    with open(path, "w", encoding="utf-8") as handle:
        for number in range(count):
            handle.write(trace_line(rng, number, start + number * 10**9) + "\n")


def run_json(path: str) -> None:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            json.loads(line)


def run_get_data(path: str) -> None:
    from bench.tools import function

    key_map = {"q_ls": "question", "pred_ls": "answer", "id_ls": "trace_id", "ctx_ls": "contexts"}
    get_data = function("benchmark", "get_data")  # the tool through the server's SPEC, as `ultra call` runs it
    result = get_data(benchmark={"path": path, "format": "otlp", "key_map": key_map, "max_bytes": 10**11})
    print(json.dumps(result["data_info"]), file=sys.stderr)


def measure(which: str, path: Path) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, max RSS in MB) of one run in a fresh subprocess, after its imports."""
    code = (
        "import resource, sys, time; sys.path.insert(0, sys.argv[3]); import traces_bench as b; "
        "import bench.tools; bench.tools.tool('benchmark', 'get_data'); "  # the tool loaded through its SPEC
        "t, w = time.process_time(), time.perf_counter(); "
        "getattr(b, sys.argv[1])(sys.argv[2]); "
        "print(time.process_time() - t, time.perf_counter() - w, "
        "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, which, str(path), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "ULTRA_READ_ROOTS": str(path.parent)},
    )
    seconds, wall, rss = done.stdout.split()
    return float(seconds), float(wall), float(rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "traces.jsonl"
        started = time.time()
        write_file(path, args.traces, args.seed)
        size = path.stat().st_size / 1e6
        print(f"{args.traces} traces, {5 * args.traces} spans, {size:.0f} MB written in {time.time() - started:.0f} s")
        floor = min((measure("run_json", path) for _ in range(args.repeats)), key=lambda r: r[0])
        ours = min((measure("run_get_data", path) for _ in range(args.repeats)), key=lambda r: r[0])
    print(f"json.loads per line : {floor[0]:6.2f} s CPU, {floor[1]:6.2f} s wall, max RSS {floor[2]:7.0f} MB")
    print(f"get_data format otlp: {ours[0]:6.2f} s CPU, {ours[1]:6.2f} s wall, max RSS {ours[2]:7.0f} MB")
    print(f"ratio               : {ours[0] / floor[0]:.2f}x CPU (target <= 2x), {ours[1] / floor[1]:.2f}x wall")
    print(f"load                : {' '.join(f'{x:.1f}' for x in os.getloadavg())} (1, 5, 15 min)")


if __name__ == "__main__":
    main()
