"""The synth MCP server: ``generate_queries`` builds a risk query set from a corpus, ``risk_route`` sends
each question to its judges, ``risk_table`` writes the risk table. ``python -m servers.synth`` serves it."""

from pathlib import Path

from servers.synth.tools import load_tools
from ultra_kit.factory import ServerSpec

INSTRUCTIONS = (
    "Synthetic risk evaluation: generate_queries writes grounded, off-topic and jailbreak questions (with qrels "
    "and a corpus copy holding planted instructions) that benchmark.get_data reads; risk_route routes each "
    "question to its judges; risk_table writes the safe / grounded rates with Wilson intervals."
)

SPEC = ServerSpec("synth", Path(__file__).parent, load_tools, instructions=INSTRUCTIONS)
