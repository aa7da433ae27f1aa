"""Benchmark of judging past one endpoint: batch mode at 100,000 UMBRELA judgments, and a pool of 3 endpoints.

    python bench/judge_scale_bench.py [--batch-pairs 100000] [--pool-pairs 6000] [--rounds 3] [--only batch|pool]

Batch mode: the Batch API test server (tests/support/batch_server.py) runs in its own process; the
client renders every UMBRELA request, checks the cache, writes the JSONL files (split at 50,000
requests / 200 MB), uploads them and creates the batches. Targets: preparation and upload (start
until the last batch is created) <= 15 s, and the client's peak RSS <= 400 MB. The rest of the run
(the server answering, the download and import into the cache, the final pass) is reported too.

Pools: 3 stub servers (tests/support/openai_stub.py), each in its own process with 50 ms latency
and 16 slots; ideal wall time = pairs x latency / 48 slots (6.25 s for 6,000). Target <= 1.25x.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.tools import call, tool  # noqa: E402
from bench.umbrela_inputs import write_pairs  # noqa: E402
from ultra_llm.batch_mode import api as batch_api  # noqa: E402

PASSAGE = (
    "The passage {i} describes topic {q} in some detail: where it comes from, how it is measured, what the "
    "main studies found and which open questions remain, with a few numbers, names and dates that a "
    "relevance judge has to read before deciding whether it answers the question asked about topic {q}."
)


PER_QUERY = 100


def make_pairs(n: int, folder: Path, round_number: int = 0) -> dict[str, str]:
    """``n`` distinct pairs with MS MARCO-sized passages (~60 words), 100 passages per query, as the tool's files
    (a round's own query texts: no answer is shared between rounds)."""
    query = "what is known about topic {q}?" + (f" ({round_number})" if round_number else "")
    return write_pairs(n, folder, per_query=PER_QUERY, query=query, passage=PASSAGE)


def umbrela(pairs: dict[str, str], judge_llm: dict, folder: Path, cache: str) -> dict:
    """The ``umbrela_judge`` tool over every pair (any failed judgment fails the call: max_failed_fraction 0)."""
    return call("judge", "umbrela_judge", **pairs, depth=PER_QUERY, judge_llm=judge_llm, judge_cache=cache,
                max_failed_fraction=0, save_path=str(folder / "out"))  # fmt: skip


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def start(module: str, *args: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return process, f"http://127.0.0.1:{process.stdout.readline().strip()}/v1"


def stop(process: subprocess.Popen) -> None:
    process.stdin.close()
    process.wait(timeout=30)


# --- batch mode ---------------------------------------------------------------------------------------
def batch_run(pairs: dict[str, str], base_url: str, cache_path: Path) -> dict[str, float]:
    marks: dict[str, float] = {}
    follow = batch_api.BatchRunner._follow

    async def timed_follow(self: batch_api.BatchRunner, active: list[str]) -> None:
        marks.setdefault("uploaded", time.perf_counter())
        marks.setdefault("cpu_uploaded", time.process_time())
        marks.setdefault("rss_uploaded", peak_rss_mb())
        marks.setdefault("batches", len(active))
        await follow(self, active)

    batch_api.BatchRunner._follow = timed_follow  # type: ignore[method-assign]
    mapping = {"model_id": "stub-judge", "base_url": base_url, "api_key": "bench", "timeout": 120, "max_retries": 3}
    mapping |= {"max_workers": 8, "mode": "batch", "batch_max_requests": 50_000, "batch_max_bytes": 200_000_000}
    mapping |= {"batch_poll_interval": 0.5, "batch_completion_window": "24h"}
    started, cpu = time.perf_counter(), time.process_time()
    try:
        umbrela(pairs, mapping, cache_path.parent, str(cache_path))
    finally:
        batch_api.BatchRunner._follow = follow  # type: ignore[method-assign]
    return {
        "prep_upload": marks["uploaded"] - started,
        "prep_upload_cpu": marks["cpu_uploaded"] - cpu,
        "total": time.perf_counter() - started,
        "rss_uploaded": marks["rss_uploaded"],
        "batches": marks["batches"],
    }


def bench_batch(n: int) -> None:
    import openai  # noqa: F401 - imported before timing: a one-off cost of about a second

    tool("judge", "umbrela_judge")  # the server's SPEC and the tool's modules too
    server, base_url = start("tests.support.batch_server")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            pairs = make_pairs(n, Path(tmp) / "inputs")
            numbers = batch_run(pairs, base_url, Path(tmp) / "cache.sqlite")
    finally:
        stop(server)
    print(
        f"batch mode, {n} UMBRELA judgments in {numbers['batches']:.0f} batches: preparation + upload "
        f"{numbers['prep_upload']:.1f} s (target <= 15 s; client CPU {numbers['prep_upload_cpu']:.1f} s), "
        f"peak RSS then {numbers['rss_uploaded']:.0f} MB, "
        f"whole run (server answers, download, import, final pass) {numbers['total']:.1f} s, "
        f"peak RSS {peak_rss_mb():.0f} MB (target <= 400 MB)"
    )


# --- pools ------------------------------------------------------------------------------------------------
def pool_run(pairs: dict[str, str], urls: list[str], slots: int, folder: Path) -> tuple[float, dict]:
    endpoints = [{"base_url": url, "model_id": "stub-judge", "max_concurrency": slots} for url in urls]
    mapping = {"endpoints": endpoints, "timeout": 30, "max_retries": 3, "max_workers": slots}
    started = time.perf_counter()
    result = umbrela(pairs, {**mapping, "drain_after": 3, "cool_down": 30}, folder, "")
    return time.perf_counter() - started, result["usage"]


def bench_pool(n: int, rounds: int, latency: float = 0.05, slots: int = 16) -> None:
    import openai  # noqa: F401

    tool("judge", "umbrela_judge")
    servers = [start("tests.support.openai_stub", "--latency", str(latency)) for _ in range(3)]
    try:
        ideal = n * latency / (3 * slots)
        ratios = []
        for round_number in range(rounds):
            with tempfile.TemporaryDirectory() as tmp:
                round_pairs = make_pairs(n, Path(tmp), round_number + 1)
                cpu = time.process_time()
                elapsed, usage = pool_run(round_pairs, [url for _, url in servers], slots, Path(tmp))
            cpu = time.process_time() - cpu
            ratios.append(elapsed / ideal)
            shares = ", ".join(str(c["requests"]) for c in usage["endpoints"].values())
            print(
                f"round {round_number + 1}: {elapsed:.2f} s ({elapsed / ideal:.2f}x), "
                f"client CPU {cpu:.1f} s, per endpoint {shares}"
            )
    finally:
        for process, _ in servers:
            stop(process)
    print(
        f"pool of 3 endpoints x {slots} slots, {latency * 1000:.0f} ms latency, {n} judgments: ideal {ideal:.2f} s, "
        f"median ratio {statistics.median(ratios):.2f}x (target <= 1.25x); "
        f"rounds {', '.join(f'{r:.2f}x' for r in ratios)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-pairs", type=int, default=100_000)
    parser.add_argument("--pool-pairs", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["batch", "pool"])
    options = parser.parse_args()
    os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # the tool's files go to temporary folders ...
    os.environ["ULTRA_READ_ROOTS"] = tempfile.gettempdir()  # ... and it reads the bench's files there
    if options.only != "pool":
        bench_batch(options.batch_pairs)
    if options.only != "batch":
        bench_pool(options.pool_pairs, options.rounds)
    with contextlib.suppress(OSError):
        print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
