"""The report MCP server: ``report`` turns result files and run folders into one self-contained HTML page."""

from pathlib import Path

from servers.report.tools import load_tools
from ultra_kit.factory import ServerSpec

SPEC = ServerSpec(
    "report",
    Path(__file__).parent,
    load_tools,
    instructions="Turns result files and `ultra run` folders into a self-contained HTML report with plots and CSVs.",
)
