"""Wall time of ``ultra run examples/load_data.yaml`` (whole process) and how much of it is server start-up.

Run from the project root: ``python bench/load_data_bench.py [--repeat 5]``. Prints medians of:
  - the whole ``ultra run`` process;
  - ``python -m servers.benchmark`` start-up to a listed tool (a stdio client that connects, lists tools, exits);
  - ``python -c "import mcp"`` alone (the SDK import both sides pay);
  - ``ultra --help`` (the client's own start-up without MCP).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import anyio, sys
from mcp import Client, StdioServerParameters
async def main():
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "servers.benchmark"], env={"PYTHONPATH": sys.argv[1]}
    )
    async with Client(params) as client:
        await client.list_tools()
anyio.run(main)
"""


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as output:
        commands = {
            "ultra run examples/load_data.yaml": [
                python,
                "ultra.py",
                "run",
                "examples/load_data.yaml",
                "--output-dir",
                output,
            ],
            "server start-up + tools/list (client and server)": [python, "-c", PROBE, str(ROOT)],
            "python -c 'import mcp'": [python, "-c", "import mcp"],
            "ultra --help": [python, "ultra.py", "--help"],
        }
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):  # alternate, so drift in machine load hits every command alike
            for name, command in commands.items():
                samples[name].append(timed(command, ROOT))
    print(f"{'command':52} {'median s':>9} {'min s':>7} {'max s':>7}")
    for name, values in samples.items():
        print(f"{name:52} {statistics.median(values):9.3f} {min(values):7.3f} {max(values):7.3f}")
    run = statistics.median(samples["ultra run examples/load_data.yaml"])
    start = statistics.median(samples["server start-up + tools/list (client and server)"])
    print(f"start-up share of the run: {start / run:.0%}")


if __name__ == "__main__":
    main()
