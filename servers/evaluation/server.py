"""The evaluation MCP server: ``python -m servers.evaluation`` serves it over stdio."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

from ultra_kit.factory import ServerSpec

INSTRUCTIONS = (
    "Scores retrieval runs against qrels exactly as trec_eval 10.0 does (evaluate_trec), tests whether "
    "one run beats another (evaluate_trec_pvalue), and scores answers against references (evaluate)."
)


TOOL_MODULES = ("trec_tools", "answer_tools", "mtrag_tools", "similarity", "consistency_tool")


def _tools() -> Iterator:
    """Each module's tools, imported one module at a time (``ultra call`` stops at the tool it needs)."""
    for module in TOOL_MODULES:
        yield from importlib.import_module(f"servers.evaluation.{module}").TOOLS


SPEC = ServerSpec("evaluation", Path(__file__).parent, _tools, instructions=INSTRUCTIONS)


def create_app():
    """Build the evaluation server with every tool it offers."""
    return SPEC.create_app()


def main() -> None:
    """Serve over stdio."""
    create_app().run()


if __name__ == "__main__":
    main()
