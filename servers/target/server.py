"""The target MCP server: ``target.ask`` sends every question to the system under test and keeps what it answered."""

from pathlib import Path

from servers.target.tools import load_tools
from ultra_kit.factory import ServerSpec

SPEC = ServerSpec(
    "target",
    Path(__file__).parent,
    load_tools,
    instructions=(
        "Asks the system under test (an HTTP service, an OpenAI-compatible endpoint, a Python function, a LangChain "
        "Runnable, a LlamaIndex engine or another MCP server's tool) every question, turn by turn for conversations, "
        "and returns its answers, passages, a TREC run of the passages' ids, latency and failures. The target's "
        "address and code come from the parameter file only."
    ),
    doc_tables={"kinds": "servers.target.kinds:kinds_markdown"},
    metric_directions=("servers.target.directions:higher_is_better",),
)
