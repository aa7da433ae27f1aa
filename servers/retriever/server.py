"""The retriever MCP server: ``retriever_init``, ``retriever_embed``, ``retriever_index``, ``retriever_search``.

Every tool reads its settings afresh (no hidden state between calls beyond a cache of loaded
indexes), so an agent may call ``retriever_search`` alone once an index is saved.
"""

from pathlib import Path

from servers.retriever.tools import load_tools
from ultra_kit.factory import ServerSpec

SPEC = ServerSpec(
    "retriever",
    Path(__file__).parent,
    load_tools,
    instructions=(
        "Retrieves passages from a corpus: BM25 by default, or dense embeddings. retriever_index builds "
        "and saves the index (reused when unchanged); retriever_search returns passages per query and "
        "writes a TREC run file for evaluation.evaluate_trec."
    ),
    heavy_imports=("bm25s",),  # the BM25 backend (with scipy.sparse)
)
