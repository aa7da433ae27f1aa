"""A sweep project in a test's folder: an evaluation-only pipeline on the TREC sample (``pipes/trec.yaml``), whose
trials take a tenth of a second."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ROOT


def write_trec_sweep(folder: Path) -> Path:
    """``pipes/trec.yaml`` and its parameter file in ``folder`` (``evaluate_trec``: MAP at depth ``max_depth``);
    ``folder``."""
    (folder / "pipes" / "parameters").mkdir(parents=True)
    pipeline = "servers:\n  evaluation: servers/evaluation\npipeline:\n  - evaluation.evaluate_trec\n"
    (folder / "pipes" / "trec.yaml").write_text(pipeline, encoding="utf-8")
    trec = ROOT / "data" / "trec"
    evaluation = {"run_path": str(trec / "results.test"), "qrels_path": str(trec / "qrels.test"), "ks": [5],
                  "ir_metrics": ["map"], "relevance_level": 1, "max_depth": None, "save_path": "results"}  # fmt: skip
    parameters = folder / "pipes" / "parameters" / "trec_parameter.yaml"
    parameters.write_text(json.dumps({"evaluation": evaluation}), encoding="utf-8")
    return folder
