"""Benchmark: a large ``get_data`` result through the MCP SDK's ``ClientSession`` over stdio, inline (the lists) and
as a file (``benchmark.max_result_bytes``: only ``data_path`` and ``data_info`` travel; the caller reads the file).

The SDK's stdio client joins every 64 KiB read onto the unfinished line before it, so reading one large line costs
time quadratic in its size (#40 M14: 290 s for 50 MB on a loaded machine). Writes a JSONL of about ``--mb`` MB of
questions, starts ``python -m servers.benchmark`` twice, times each call from request to parsed result (the file
way includes reading the file back with ``json.loads``), and prints both times and the result sizes.

    python bench/large_result_bench.py [--mb 20]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent


async def call(folder: Path, benchmark: dict) -> tuple[float, int, int]:
    """(seconds from the call to the lists in hand, records, bytes that crossed stdio as the result)."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "ULTRA_READ_ROOTS": str(folder),
           "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}  # fmt: skip
    params = StdioServerParameters(command=sys.executable, args=["-m", "servers.benchmark"], cwd=str(ROOT), env=env)
    with (folder / "server.log").open("w") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            started = time.perf_counter()
            result = await client.call_tool("get_data", {"benchmark": benchmark})
            data = result.structured_content
            crossed = len(json.dumps(data))
            if "data_path" in data:
                data = json.loads(Path(data["data_path"]).read_text(encoding="utf-8"))
            return time.perf_counter() - started, len(data["q_ls"]), crossed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="size of the result, about (default 20)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        rows = int(args.mb * 1000)  # about 1 KB each
        data = folder / "big.jsonl"
        data.write_text("".join(json.dumps({"id": f"q{i}", "question": "x" * 1000, "golden_answers": ["a"]}) + "\n"
                                for i in range(rows)), encoding="utf-8")  # fmt: skip
        base = {"path": str(data), "save_path": str(folder / "results")}
        inline = anyio.run(call, folder, base)
        as_file = anyio.run(call, folder, {**base, "max_result_bytes": 1_000_000})
    print(f"load: {os.getloadavg()[0]:.1f}")
    for name, (seconds, records, crossed) in (("inline", inline), ("as a file", as_file)):
        print(f"{name:>10}: {seconds:7.2f} s, {records:,} records, {crossed:,} bytes of result over stdio")


if __name__ == "__main__":
    main()
