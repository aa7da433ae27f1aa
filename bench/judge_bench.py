"""Benchmark of the judge's LLM client: 2,000 UMBRELA judgments against the local stub server.

    python bench/judge_bench.py [--pairs 2000] [--workers 32] [--latency 0.05] [--rounds 5]

The stub (tests/support/openai_stub.py) runs in its own process with a fixed latency per request,
so it does not compete with the client for the GIL. The ideal wall time is
pairs x latency / workers (3.1 s for the defaults); the target is within 1.25x of it. A second
run over the same SQLite cache must send zero requests and take under 1 s. Each round is a cold run
(a fresh cache) and a warm one; the medians are reported with every round's ratio.
"""

from __future__ import annotations

import argparse
import asyncio
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

from servers.judge.common.inputs import Pair  # noqa: E402
from servers.judge.relevance.umbrela import judge_pairs  # noqa: E402
from ultra_llm.cache import AnswerCache  # noqa: E402
from ultra_llm.client import LLMClient, LLMSettings  # noqa: E402


def make_pairs(n: int) -> list[Pair]:
    """``n`` distinct (query, passage) pairs, 20 passages per query."""
    return [
        Pair(
            f"q{i // 20}",
            f"what is topic {i // 20}?",
            f"d{i}",
            f"Passage {i} talks about topic {i // 20} at length.",
            i % 20 + 1,
        )
        for i in range(n)
    ]


def stub_requests(base_url: str) -> int:
    with urllib.request.urlopen(f"{base_url}/stats", timeout=10) as response:  # noqa: S310 - loopback only
        return int(json.load(response)["requests"])


async def judge(pairs: list[Pair], base_url: str, workers: int, cache_path: Path) -> tuple[float, dict]:
    limits = {"max_workers": workers, "timeout": 30, "max_retries": 3}
    settings = LLMSettings.from_mapping(
        {"model_id": "stub-judge", "base_url": base_url, "api_key": "bench", **limits}, name="bench judge"
    )
    cache = AnswerCache(cache_path)
    started = time.perf_counter()
    async with LLMClient(settings, cache) as client:
        judgments = await judge_pairs(pairs, client, max_retries=3)
        usage = client.usage.as_dict()
    elapsed = time.perf_counter() - started
    cache.close()
    bad = sum(j.status != "ok" for j in judgments)
    if bad:
        raise SystemExit(f"{bad} judgments failed")
    return elapsed, usage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()

    import openai  # noqa: F401 - imported before timing: a one-off cost of about a second

    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_stub", "--latency", str(options.latency)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = f"http://127.0.0.1:{stub.stdout.readline().strip()}/v1"
        pairs = make_pairs(options.pairs)
        ideal = options.pairs * options.latency / options.workers
        rounds = []
        for _ in range(options.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                cache_path = Path(tmp) / "bench_cache.sqlite"
                before = stub_requests(base_url)
                cpu = time.process_time()
                cold, usage = asyncio.run(judge(pairs, base_url, options.workers, cache_path))
                cpu = time.process_time() - cpu
                cold_requests = stub_requests(base_url) - before
                before = stub_requests(base_url)
                warm, warm_usage = asyncio.run(judge(pairs, base_url, options.workers, cache_path))
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
