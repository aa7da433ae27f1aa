"""Wall time of ``ultra run examples/load_data.yaml`` (whole process), in-process and over stdio.

Run from the project root: ``python bench/load_data_bench.py [--repeat 5]``. Prints medians of
whole processes, run alternately in one sitting (so drift in machine load hits each alike):
  - ``ultra run`` (tools in-process, the default) and ``ultra run --stdio`` (an MCP server subprocess);
  - ``ultra build`` (tools read from the server's SPEC, no server started);
  - ``python -m servers.benchmark`` start-up to a listed tool (a stdio client that connects, lists tools, exits);
  - ``python -c "import mcp"`` alone (the SDK import both sides of stdio pay);
  - ``ultra --help`` (the client's own start-up).
Then the targets: run <= 0.6 s and >= 4x faster than --stdio; build <= 0.5 s; tools/list <= 1.5 s.
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
RUN = "ultra run examples/load_data.yaml"
RUN_STDIO = "ultra run examples/load_data.yaml --stdio"
BUILD = "ultra build examples/load_data.yaml"
LIST = "server start-up + tools/list (client and server)"
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
        run = [python, "ultra.py", "run", "examples/load_data.yaml", "--output-dir", output]
        commands = {
            RUN: run,
            RUN_STDIO: [*run, "--stdio"],
            BUILD: [python, "ultra.py", "build", "examples/load_data.yaml"],
            LIST: [python, "-c", PROBE, str(ROOT)],
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
    median = {name: statistics.median(values) for name, values in samples.items()}
    checks = [
        (f"{RUN} <= 0.6 s", median[RUN] <= 0.6, f"{median[RUN]:.3f} s"),
        ("--stdio / in-process >= 4x", median[RUN_STDIO] >= 4 * median[RUN], f"{median[RUN_STDIO] / median[RUN]:.1f}x"),
        (f"{BUILD} <= 0.5 s", median[BUILD] <= 0.5, f"{median[BUILD]:.3f} s"),
        ("tools/list over stdio <= 1.5 s", median[LIST] <= 1.5, f"{median[LIST]:.3f} s"),
    ]
    for name, met, value in checks:
        print(f"{'met' if met else 'MISSED':6} {name}: {value}")


if __name__ == "__main__":
    main()
