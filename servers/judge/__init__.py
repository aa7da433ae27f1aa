"""The judge server: LLMs (and a cross-encoder) as measuring instruments.

Relevance grades (UMBRELA) and their agreement with human qrels (``relevance/``), nugget evaluation
(``nuggets/``), the answer judges declared in ``answers/judges/`` (IDK, citations, RAGAS, factual
correctness, risk), hallucination scores (``hallucination/``), the TREC RAG table and offline batch
files. ``server.py`` holds the ``SPEC``; the MCP tools are in ``tools/``; the LLM client is ``ultra_llm``.
"""
