"""The evaluation MCP server: ``python -m servers.evaluation`` serves it over stdio."""

from pathlib import Path

from servers.evaluation.tools import load_tools
from ultra_kit.factory import ServerSpec

INSTRUCTIONS = (
    "Scores retrieval runs against qrels exactly as trec_eval 10.0 does (evaluate_trec), tests whether "
    "one run beats another (evaluate_trec_pvalue), and scores answers against references (evaluate)."
)

SPEC = ServerSpec(
    "evaluation",
    Path(__file__).parent,
    load_tools,
    instructions=INSTRUCTIONS,
    doc_tables={
        "answer-metrics": "servers.evaluation.answers.metrics:registry_markdown",
        "mtrag-metrics": "servers.evaluation.mtrag.metrics:registry_markdown",
    },
    metric_directions=(  # trec_eval's measures are all higher-is-better: none is named
        "servers.evaluation.answers.metrics:higher_is_better",
        "servers.evaluation.mtrag.metrics:higher_is_better",
    ),
    heavy_imports=("pyarrow.compute", "pyarrow.csv"),  # the TREC files' reader (ultra_trec.reading)
)
