"""Time a large tool result over MCP stdio: the SDK's own stdout reader against our whole-line shim.

    python bench/stdio_bench.py                  # sizes 5k, 20k, 40k, 80k records, 3 rounds each
    python bench/stdio_bench.py --records 10000 40000 --rounds 5

Each timed process starts the benchmark server over stdio with the official SDK client, calls
``get_data`` on a generated JSONL file (question lengths vary: 20-200 words), and waits for the
whole result: (a) the SDK as shipped, (b) with ``ultra_client.calls.stdio_lines.install()``, (c) the
same call in-process (``ultra call`` without ``--stdio``) as the floor. Rounds alternate (a), (b),
(c). Prints the result size, medians and the ratio (a) / (b).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CALL = """
import anyio, json, sys
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
if sys.argv[2] == "shim":
    from ultra_client.calls import stdio_lines
    stdio_lines.install()
async def main():
    params = StdioServerParameters(command=sys.executable, args=["-m", "servers.benchmark"], cwd=sys.argv[3])
    async with Client(stdio_client(params)) as client:
        spec = {"path": sys.argv[1], "key_map": {"q_ls": "question", "id_ls": "id"}}
        result = await client.call_tool("get_data", {"benchmark": spec})
        print(len(json.dumps(result.structured_content)))
anyio.run(main)
"""


def make_data(folder: Path, records: int, seed: int) -> Path:
    rng = random.Random(seed)
    path = folder / f"data_{records}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(records):
            words = " ".join(f"w{rng.randrange(10_000)}" for _ in range(rng.randint(20, 200)))
            handle.write(json.dumps({"id": f"q{i}", "question": words}) + "\n")
    return path


def timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True)
    return time.perf_counter() - started, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[5_000, 20_000, 40_000, 80_000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    env_python = sys.executable
    rows = []
    os.environ["ULTRA_READ_ROOTS"] = tempfile.gettempdir()  # get_data reads the data made there
    with tempfile.TemporaryDirectory() as tmp:
        for records in args.records:
            data = make_data(Path(tmp), records, seed=records)
            spec = f"benchmark={{path: {data}, key_map: {{q_ls: question, id_ls: id}}}}"
            times: dict[str, list[float]] = {"sdk": [], "shim": [], "in-process": []}
            size = 0
            for _ in range(args.rounds):
                for mode in ("sdk", "shim"):
                    seconds, out = timed([env_python, "-c", CALL, str(data), mode, str(ROOT)])
                    times[mode].append(seconds)
                    size = int(out.strip())
                seconds, _ = timed([env_python, "ultra.py", "call", "benchmark.get_data", spec])
                times["in-process"].append(seconds)
            medians = {mode: statistics.median(values) for mode, values in times.items()}
            rows.append((records, size, medians))
            print(
                f"{records:>7} records, {size / 1e6:6.1f} MB: SDK {medians['sdk']:6.2f} s, "
                f"shim {medians['shim']:6.2f} s, in-process {medians['in-process']:5.2f} s, "
                f"SDK/shim {medians['sdk'] / medians['shim']:5.1f}x",
                flush=True,
            )
    print(f"medians of {args.rounds} rounds per mode, alternating")


if __name__ == "__main__":
    main()
