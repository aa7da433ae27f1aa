"""The judge MCP server's ``SPEC``: ``python -m servers.judge`` serves it over stdio.

The tools are in ``tools/`` (one module per family), their logic in ``relevance/``, ``nuggets/``,
``answers/`` and ``hallucination/``, the parts they share in ``common/``.
"""

from __future__ import annotations

from pathlib import Path

from ultra_kit.factory import ServerSpec

INSTRUCTIONS = (
    "LLM judges as measuring instruments. umbrela_judge grades passages 0-3 for relevance to a query "
    "(UMBRELA) and writes a qrels file that evaluation.evaluate_trec reads; judge_agreement compares "
    "LLM grades with human qrels (Cohen's kappa, confusion matrix, Kendall's tau of system rankings). "
    "Every judged item has a status: ok, parse_error (with the raw reply) or error; failures are never scores."
)


def _tools():
    from servers.judge.tools import tools

    return tools()


SPEC = ServerSpec(
    "judge",
    Path(__file__).parent,
    _tools,
    instructions=INSTRUCTIONS,
    doc_tables={"judges": "servers.judge.answers.registry:registry_markdown"},
    metric_directions=(
        "servers.judge.answers.registry:higher_is_better",
        "servers.judge.hallucination.run:higher_is_better",
    ),
    setting_checks={
        "rubrics": "servers.judge.rubrics.sources:check_rubrics",
        "rubrics_path": "servers.judge.rubrics.sources:check_rubrics_path",
        "prompt_file": "servers.judge.common.overrides:check_prompt_file",
        "judge_llm": "servers.judge.common.llm_settings:check_judge_llm",
    },
)
