"""The benchmark MCP server: ``get_data`` loads a dataset into aligned lists for the pipeline."""

from pathlib import Path

from servers.benchmark.tools import load_tools
from ultra_kit.factory import ServerSpec

SPEC = ServerSpec(
    "benchmark",
    Path(__file__).parent,
    load_tools,
    instructions="Loads evaluation datasets as aligned lists (questions, answers, predictions, ids, contexts).",
)
