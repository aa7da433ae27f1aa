"""ultra_trec: trec_eval 10.0's measures as a Python library, without MCP or pydantic.

    from ultra_trec import evaluate, compare
    result = evaluate("qrels.test", "results.test", ["map", "ndcg@10", "P.5,10", "ndcg.1=3,2=9"])
    result.aggregate, result.per_query, result.counts
    table = compare("qrels.test", ["new.run"], "base.run", ["map"], ks=None, relevance_level=1,
                    n_resamples=10_000, seed=42, alpha=0.05, correction="holm")

Modules: ``registry`` (every measure family, declared once, with its formula and citation),
``measures`` (names and parameters), ``engine`` (``evaluate``), ``comparison`` and ``significance``
(paired tests), ``trec_eval_text`` (trec_eval's ``-m`` options and printed report), ``reading/``
(files and in-memory sources), ``table``, ``ranking`` and the kernels (``scoring*``).
The only project import is ``ultra_base.errors``. Importing the package loads nothing else until
``evaluate`` or ``compare`` is first used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["compare", "evaluate"]


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from ultra_trec.engine import evaluate

        return evaluate
    if name == "compare":
        from ultra_trec.comparison import compare_runs

        return compare_runs
    raise AttributeError(f"module 'ultra_trec' has no attribute {name!r}")
