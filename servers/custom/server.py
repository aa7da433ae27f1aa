"""The custom MCP server: ``output_extract_from_boxed``, ``select_qrels``, ``rankings_to_run``: small pure glue."""

from pathlib import Path

from servers.custom.tools import load_tools
from ultra_kit.factory import ServerSpec

SPEC = ServerSpec(
    "custom",
    Path(__file__).parent,
    load_tools,
    instructions=(
        "Glue between pipeline steps: final answers from \\boxed{...}, qrels of the questions asked,"
        " a TREC run from rankings."
    ),
)
