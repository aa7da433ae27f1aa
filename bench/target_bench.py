"""Benchmark of ``target.ask``: its overhead over a bare aiohttp loop, and the python kind's overhead per request.

    python bench/target_bench.py [--questions 5000] [--workers 32] [--latency 0.05] [--repeats 3]

A local endpoint (an aiohttp server in its own process, so it does not compete with the client for the GIL)
answers every POST after ``--latency`` seconds with ``{answer, contexts: [{text, id, score}, ...]}``. Over a
grid of data (short and long questions; small and large replies: 2 passages of 100 bytes, or 10 of 2 KB) and
``--repeats`` rounds, each round times:

* ``target.ask`` with the http kind (called in process through the target server's SPEC, its public face:
  the run journal, the records, the TREC run and the latency summary included), ``max_workers`` 32;
* a bare ``aiohttp`` loop with the same concurrency: POST the same body, read the reply's JSON, nothing kept.

It reports the median wall time of each and their ratio (target: ``target.ask`` at most 1.15x the bare loop),
and the client's CPU per request (this process's user + system time / requests). Then the python kind: a
function that answers at once (async, then sync: a sync one runs in a worker thread), 5,000 items, its
wall and CPU per item, which is the tool's own overhead per request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = {"small": (2, 100), "large": (10, 2000)}  # reply: passages x bytes of text each
QUESTIONS = {"short": 40, "long": 2000}  # characters per question
TARGET_RATIO = 1.15


def serve(port: int, latency: float) -> None:
    """The endpoint: every POST answered after ``latency`` s with a reply of the size the body asks for."""
    from aiohttp import web

    replies = {
        name: json.dumps(
            {
                "answer": "x" * 200,
                "contexts": [{"text": "p" * chars, "id": f"doc{i}", "score": 1.0 / (i + 1)} for i in range(count)],
            }
        ).encode()
        for name, (count, chars) in SIZES.items()
    }

    async def answer(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(latency)
        return web.Response(body=replies[body["size"]], content_type="application/json")

    app = web.Application(client_max_size=1 << 24)
    app.router.add_post("/ask", answer)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_endpoint(latency: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--latency", str(latency)])
    url = f"http://127.0.0.1:{port}/ask"
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                return process, url
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("the endpoint did not start")


def questions(count: int, chars: int) -> list[str]:
    return [(f"question {i} " + "w" * chars)[:chars] for i in range(count)]


async def bare_loop(url: str, items: list[str], size: str, workers: int) -> None:
    """POST every question with ``workers`` in flight; each reply read and parsed, nothing kept."""
    import aiohttp

    slots = asyncio.Semaphore(workers)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(question: str) -> None:
            async with slots, session.post(url, json={"question": question, "size": size}) as response:
                document = await response.json()
                assert document["answer"]

        await asyncio.gather(*(one(q) for q in items))


def timed(call) -> tuple[float, float]:
    """Wall and CPU (user + system of this process) seconds of ``call()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def ask_tool():
    from ultra_kit.inprocess import call_local_tool, load_spec, local_tools

    spec = load_spec("servers.target", ROOT)
    tool = local_tools(spec)["ask"]
    return lambda arguments: asyncio.run(call_local_tool(tool, arguments))


def target_arguments(items: list[str], target: dict, folder: Path) -> dict:
    return {"q_ls": items, "id_ls": [f"q{i}" for i in range(len(items))], "target": target, "save_path": str(folder)}


def http_target(url: str, size: str, workers: int) -> dict:
    return {
        "kind": "http", "url": url, "body": {"question": "{{ question }}", "size": size}, "answer": "answer",
        "contexts": "contexts", "context_text": "text", "context_id": "id", "context_score": "score",
        "max_workers": workers, "timeout": 60, "max_retries": 0, "rate_limit": 0,
    }  # fmt: skip


PYTHON_TARGET = """
def answer(request):
    return {"answer": "a", "contexts": [{"text": "t", "id": "d1", "score": 1.0}]}

async def answer_async(request):
    return {"answer": "a", "contexts": [{"text": "t", "id": "d1", "score": 1.0}]}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve, args.latency)

    os.environ["ULTRA_ALLOW_OUTSIDE_OUTPUT"] = "1"  # results go to the bench's temporary folder
    work = Path(tempfile.mkdtemp(prefix="target_bench_"))
    from ultra_base.errors import add_read_root

    add_read_root(work)
    ask = ask_tool()
    process, url = start_endpoint(args.latency)
    ideal = args.questions * args.latency / args.workers
    print(f"{args.questions} questions, {args.workers} workers, endpoint latency {args.latency * 1000:g} ms "
          f"(ideal wall {ideal:.2f} s), {args.repeats} repeats; medians")  # fmt: skip
    print(f"{'data':<18} {'bare s':>7} {'ask s':>7} {'ratio':>6} {'bare CPU ms/req':>16} {'ask CPU ms/req':>15}")
    ratios = []
    try:
        asyncio.run(bare_loop(url, questions(64, 40), "small", args.workers))  # warm: imports, connections
        for length, chars in QUESTIONS.items():
            for size in SIZES:
                items = questions(args.questions, chars)
                bare, asked = [], []
                for repeat in range(args.repeats):
                    bare.append(timed(lambda: asyncio.run(bare_loop(url, items, size, args.workers))))  # noqa: B023
                    folder = work / f"{length}_{size}_{repeat}"
                    arguments = target_arguments(items, http_target(url, size, args.workers), folder)
                    asked.append(timed(lambda: ask(arguments)))  # noqa: B023
                wall_bare = statistics.median(w for w, _ in bare)
                wall_ask = statistics.median(w for w, _ in asked)
                ratio = statistics.median(a[0] / b[0] for a, b in zip(asked, bare, strict=True))
                ratios.append(ratio)
                cpu_bare = statistics.median(c for _, c in bare) / args.questions * 1000
                cpu_ask = statistics.median(c for _, c in asked) / args.questions * 1000
                print(f"{length + ' q, ' + size + ' reply':<18} {wall_bare:7.2f} {wall_ask:7.2f} {ratio:6.3f} "
                      f"{cpu_bare:16.3f} {cpu_ask:15.3f}")  # fmt: skip
    finally:
        process.terminate()
        process.wait()
    worst = max(ratios)
    print(f"median ratio over the data: {statistics.median(ratios):.3f}, worst {worst:.3f} "
          f"(target <= {TARGET_RATIO}: {'met' if worst <= TARGET_RATIO else 'NOT met'})")  # fmt: skip

    (work / "bench_target.py").write_text(PYTHON_TARGET, encoding="utf-8")
    print(f"\npython kind, {args.questions} items, a function that answers at once, {args.workers} workers:")
    for name in ("answer_async", "answer"):
        runs = []
        for repeat in range(args.repeats):
            target = {"kind": "python", "function": f"{work / 'bench_target.py'}:{name}", "max_workers": args.workers}
            folder = work / f"python_{name}_{repeat}"
            runs.append(timed(lambda: ask(target_arguments(questions(args.questions, 40), target, folder))))  # noqa: B023
        wall = statistics.median(w for w, _ in runs) / args.questions * 1e6
        cpu = statistics.median(c for _, c in runs) / args.questions * 1e6
        kind = "async" if name.endswith("async") else "sync (a thread per call)"
        print(f"  {kind:<26} wall {wall:7.1f} us/item, CPU {cpu:7.1f} us/item")


if __name__ == "__main__":
    main()
