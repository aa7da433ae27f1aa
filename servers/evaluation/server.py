"""The evaluation MCP server: ``python -m servers.evaluation`` serves it over stdio."""

from __future__ import annotations

from pathlib import Path

from servers.core.factory import ServerSpec

INSTRUCTIONS = (
    "Scores retrieval runs against qrels exactly as trec_eval 10.0 does (evaluate_trec), tests whether "
    "one run beats another (evaluate_trec_pvalue), and scores answers against references (evaluate)."
)


def _tools() -> list:
    from servers.evaluation.answer_tools import TOOLS as answer_tools
    from servers.evaluation.consistency_tool import TOOLS as consistency_tools
    from servers.evaluation.mtrag_tools import TOOLS as mtrag_tools
    from servers.evaluation.similarity import TOOLS as similarity_tools
    from servers.evaluation.trec_tools import TOOLS as retrieval_tools

    return [*retrieval_tools, *answer_tools, *mtrag_tools, *similarity_tools, *consistency_tools]


SPEC = ServerSpec("evaluation", Path(__file__).parent, _tools, instructions=INSTRUCTIONS)


def create_app():
    """Build the evaluation server with every tool it offers."""
    return SPEC.create_app()


def main() -> None:
    """Serve over stdio."""
    create_app().run()


if __name__ == "__main__":
    main()
