"""Benchmark of the judge's LLM client: 2,000 UMBRELA judgments against the local stub server.

    python bench/judge_bench.py [--pairs 2000] [--workers 32] [--latency 0.05] [--rounds 5] [--jury 3]

The stub (tests/support/openai_stub.py) runs in its own process with a fixed latency per request,
so it does not compete with the client for the GIL. The ideal wall time is
pairs x latency / workers (3.1 s for the defaults); the target is within 1.25x of it. A second
run over the same SQLite cache must send zero requests and take under 1 s. Each round is a cold run
(a fresh cache) and a warm one; the medians are reported with every round's ratio.

``--jury N``: the jury case instead. N members (N stub processes, one model each) judge every pair, each
member with ``--workers`` slots, through the judges' jury layer (``servers.judge.common.jury``). Each round
times every member judging alone, then the jury (fresh caches); the target is a jury time within 1.25x of
the slowest member alone: the members run at the same time, not one after another.
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
from servers.judge.common.prompting import Prompts  # noqa: E402
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
        judgments = await judge_pairs(pairs, client, prompts=Prompts.as_written(), max_retries=3)
        usage = client.usage.as_dict()
    elapsed = time.perf_counter() - started
    cache.close()
    bad = sum(j.status != "ok" for j in judgments)
    if bad:
        raise SystemExit(f"{bad} judgments failed")
    return elapsed, usage


async def jury_time(pairs: list[Pair], urls: list[str], workers: int, cache_path: Path) -> float:
    """Seconds for the members at ``urls`` (one alone when a single url) to judge every pair via the jury layer."""
    from servers.judge.common.jury import judge_items
    from servers.judge.relevance.umbrela import pair_items

    members = [{"base_url": url, "model_id": f"stub-judge-{i}", "api_key": "bench"} for i, url in enumerate(urls)]
    mapping = {"timeout": 30, "max_retries": 3, "max_workers": workers, "jury_aggregate": "median"}
    mapping |= {"jury": members} if len(members) > 1 else {**members[0]}
    settings = LLMSettings.from_mapping(mapping, name="bench judge")
    cache = AnswerCache(cache_path)
    started = time.perf_counter()
    judged = await judge_items(
        settings, cache, lambda client: pair_items(pairs, client, prompts=Prompts.as_written(), progress=None),
        scales={"score": "ordinal"},
        tool="bench",
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    cache.close()
    bad = sum(item["status"] != "ok" for item in judged.items)
    if bad:
        raise SystemExit(f"{bad} judgments failed")
    return elapsed


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
    pairs = make_pairs(options.pairs)
    rounds = []
    try:
        for _ in range(options.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                alone = [asyncio.run(jury_time(pairs, [url], options.workers, Path(tmp) / f"{i}.sqlite"))
                         for i, url in enumerate(urls)]  # fmt: skip
                cpu = time.process_time()
                jury = asyncio.run(jury_time(pairs, urls, options.workers, Path(tmp) / "jury.sqlite"))
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

    if options.jury:
        jury_case(options)
        return
    stub, base_url = start_stub(options.latency)
    try:
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
