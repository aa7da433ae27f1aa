"""The judge MCP server: ``python -m servers.judge`` serves it over stdio."""

from __future__ import annotations

from pathlib import Path

from servers.core.factory import build_server

INSTRUCTIONS = (
    "LLM judges as measuring instruments. umbrela_judge grades passages 0-3 for relevance to a query "
    "(UMBRELA) and writes a qrels file that evaluation.evaluate_trec reads; judge_agreement compares "
    "LLM grades with human qrels (Cohen's kappa, confusion matrix, Kendall's tau of system rankings). "
    "Every judged item has a status: ok, parse_error (with the raw reply) or error; failures are never scores."
)


def create_app():
    """Build the judge server with every tool it offers."""
    from servers.judge.tools import TOOLS

    return build_server("judge", TOOLS, package_dir=Path(__file__).parent, instructions=INSTRUCTIONS)


def main() -> None:
    """Serve over stdio."""
    create_app().run()


if __name__ == "__main__":
    main()
