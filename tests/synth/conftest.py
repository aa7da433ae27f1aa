"""Fixtures of the synth tests: a small real corpus, a scripted stub LLM, and generate_queries' settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.risk_suite import UNANSWERABLE, scripted  # noqa: F401 - the synth tests import them from here
from ultra_kit.settings import defaults

ROOT = Path(__file__).resolve().parents[2]


def small_corpus(path: Path, n: int = 12) -> Path:
    """``n`` documents from data/rag/corpus.jsonl (real passages), one of them with the UNANSWERABLE word."""
    rows = [json.loads(line) for line in (ROOT / "data/rag/corpus.jsonl").read_text().splitlines()[:n]]
    rows[3]["text"] = rows[3]["title"] + "\nThe " + UNANSWERABLE + " " + rows[3]["text"]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def synth_settings(stub_url: str, tmp_path: Path, **given: Any) -> dict[str, Any]:
    """generate_queries' settings: parameter.yaml's, the stub as LLM, no cache, outputs under tmp_path."""
    settings = {k: v for k, v in defaults("synth").items() if k not in ("toxicity_threshold", "table_path")}
    llm = {"backend": "openai", "base_url": stub_url, "model_id": "stub", "api_key": ""}
    settings.update(synth_llm=llm, synth_cache="", dataset_dir=str(tmp_path / "risk"))
    settings.update(given)
    return settings
