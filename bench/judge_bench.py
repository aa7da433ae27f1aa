"""Benchmark of the judge's LLM client: 2,000 UMBRELA judgments against the local stub server.

    python bench/judge_bench.py [--pairs 2000] [--workers 32] [--latency 0.05] [--rounds 5] [--jury 3]

The judgments are the ``umbrela_judge`` tool's, called in process through the judge server's SPEC (file mode:
queries, corpus and a run written for the bench; the tool also writes its qrels, judged run and result file).
The stub (tests/support/openai_stub.py) runs in its own process with a fixed latency per request,
so it does not compete with the client for the GIL. The ideal wall time is
pairs x latency / workers (3.1 s for the defaults); the target is within 1.25x of it. A second
run over the same SQLite cache must send zero requests and take under 1 s. Each round is a cold run
(a fresh cache) and a warm one; the medians are reported with every round's ratio.

``--jury N``: the jury case instead. N members (N stub processes, one model each) judge every pair, each
member with ``--workers`` slots, through the tool's jury (``judge_llm.jury``). Each round
times every member judging alone, then the jury (fresh caches); the target is a jury time within 1.25x of
the slowest member alone: the members run at the same time, not one after another.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import umbrela_inputs  # noqa: E402
from bench.tools import call, tool  # noqa: E402

PER_QUERY = 20


def write_pairs(n: int, folder: Path) -> dict[str, str]:
    """``n`` distinct (query, passage) pairs, 20 passages per query, as the tool's files: {setting: path}."""
    return umbrela_inputs.write_pairs(n, folder, per_query=PER_QUERY, query="what is topic {q}?",
                                      passage="Passage {i} talks about topic {q} at length.")  # fmt: skip


def umbrela(pairs: dict[str, str], judge_llm: dict, cache_path: Path) -> dict:
    """The ``umbrela_judge`` tool over every pair (any failed judgment fails the call: max_failed_fraction 0)."""
    return call(
        "judge", "umbrela_judge", **pairs, depth=PER_QUERY, judge_llm=judge_llm, judge_cache=str(cache_path),
        max_failed_fraction=0, save_path=str(cache_path.parent / "out"),
    )  # fmt: skip


def stub_requests(base_url: str) -> int:
    with urllib.request.urlopen(f"{base_url}/stats", timeout=10) as response:  # noqa: S310 - loopback only
        return int(json.load(response)["requests"])


def judge(pairs: dict[str, str], base_url: str, workers: int, cache_path: Path) -> tuple[float, dict]:
    limits = {"max_workers": workers, "timeout": 30, "max_retries": 3}
    judge_llm = {"model_id": "stub-judge", "base_url": base_url, "api_key": "bench", **limits}
    started = time.perf_counter()
    result = umbrela(pairs, judge_llm, cache_path)
    return time.perf_counter() - started, result["usage"]


def jury_time(pairs: dict[str, str], urls: list[str], workers: int, cache_path: Path) -> float:
    """Seconds for the members at ``urls`` (one alone when a single url) to judge every pair through the jury."""
    members = [{"base_url": url, "model_id": f"stub-judge-{i}", "api_key": "bench"} for i, url in enumerate(urls)]
    mapping = {"timeout": 30, "max_retries": 3, "max_workers": workers, "jury_aggregate": "median"}
    mapping |= {"jury": members} if len(members) > 1 else {**members[0]}
    started = time.perf_counter()
    umbrela(pairs, mapping, cache_path)
    return time.perf_counter() - started


def start_stub(latency: float) -> tuple[subprocess.Popen, str]:
    """The stub server in its own process; its base URL."""
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_stub", "--latency", str(latency)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return stub, f"http://127.0.0.1:{stub.stdout.readline().strip()}/v1"


def jury_case(options: argparse.Namespace) -> None:
    """Each member alone, then the jury, per round; the jury's ratio to the slowest member alone."""
    stubs = [start_stub(options.latency) for _ in range(options.jury)]
    urls = [url for _, url in stubs]
    rounds = []
    try:
        for _ in range(options.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                pairs = write_pairs(options.pairs, Path(tmp))
                alone = [jury_time(pairs, [url], options.workers, Path(tmp) / f"{i}.sqlite")
                         for i, url in enumerate(urls)]  # fmt: skip
                cpu = time.process_time()
                jury = jury_time(pairs, urls, options.workers, Path(tmp) / "jury.sqlite")
                cpu = (time.process_time() - cpu) / (len(urls) * len(pairs)) * 1000
            rounds.append((max(alone), jury))
            print(f"round {len(rounds)}: members alone {', '.join(f'{a:.2f}' for a in alone)} s, jury {jury:.2f} s "
                  f"({jury / max(alone):.2f}x the slowest), client CPU {cpu:.2f} ms per request")  # fmt: skip
    finally:
        for stub, _ in stubs:
            stub.stdin.close()
            stub.wait(timeout=10)
    slowest, jury = (statistics.median(column) for column in zip(*rounds, strict=True))
    print(
        f"jury of {options.jury} x {options.pairs} pairs, {options.workers} slots per member, stub latency "
        f"{options.latency * 1000:.0f} ms: jury {jury:.2f} s, slowest member alone {slowest:.2f} s, ratio "
        f"{jury / slowest:.2f}x (target <= 1.25x; median of {len(rounds)} rounds)"
    )
    with contextlib.suppress(OSError):
        print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jury", type=int, default=0, help="the jury case: this many members (e.g. 3)")
    options = parser.parse_args()

    import openai  # noqa: F401 - imported before timing: a one-off cost of about a second

    tool("judge", "umbrela_judge")  # so is the judge server's SPEC and the tool's modules

    if options.jury:
        os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"
        os.environ["ULTRA_READ_ROOTS"] = tempfile.gettempdir()
        jury_case(options)
        return
    os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # the tool's files go to a temporary folder ...
    os.environ["ULTRA_READ_ROOTS"] = tempfile.gettempdir()  # ... and it reads the bench's files there
    stub, base_url = start_stub(options.latency)
    try:
        ideal = options.pairs * options.latency / options.workers
        rounds = []
        for _ in range(options.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                pairs = write_pairs(options.pairs, Path(tmp))
                cache_path = Path(tmp) / "bench_cache.sqlite"
                before = stub_requests(base_url)
                cpu = time.process_time()
                cold, usage = judge(pairs, base_url, options.workers, cache_path)
                cpu = time.process_time() - cpu
                cold_requests = stub_requests(base_url) - before
                before = stub_requests(base_url)
                warm, warm_usage = judge(pairs, base_url, options.workers, cache_path)
                warm_requests = stub_requests(base_url) - before
            rounds.append((cold, cpu, cold_requests, warm, warm_requests, warm_usage["cache_hits"]))
            print(f"round {len(rounds)}: cold {cold:.2f} s ({cold / ideal:.2f}x), warm {warm:.2f} s")
    finally:
        stub.stdin.close()
        stub.wait(timeout=10)
    print(f"pairs {options.pairs}, judge_max_workers {options.workers}, stub latency {options.latency * 1000:.0f} ms")
    medians = (statistics.median(column) for column in zip(*rounds, strict=True))
    cold, cpu, cold_requests, warm, warm_requests, hits = medians
    print(
        f"cold run (median of {len(rounds)}): {cold_requests:.0f} requests sent, wall {cold:.2f} s, "
        f"ideal {ideal:.2f} s, ratio {cold / ideal:.2f}x (target <= 1.25x); "
        f"rounds {', '.join(f'{r[0] / ideal:.2f}x' for r in rounds)}"
    )
    per_request = cpu / options.pairs * 1000
    print(f"          client CPU {cpu:.2f} s ({per_request:.2f} ms per request), tokens {usage['total_tokens']}")
    print(
        f"warm run (median): {warm_requests:.0f} requests sent, wall {warm:.2f} s (target < 1 s, 0 requests), "
        f"cache hits {hits:.0f}"
    )
    with contextlib.suppress(OSError):
        print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
