"""Fixtures of the synth tests: a small real corpus, a scripted stub LLM, and generate_queries' settings."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.openai_stub import content_of
from ultra_kit.settings import defaults

ROOT = Path(__file__).resolve().parents[2]
UNANSWERABLE = "ledger"  # the grounded question about the document holding this word fails the self-check


def small_corpus(path: Path, n: int = 12) -> Path:
    """``n`` documents from data/rag/corpus.jsonl (real passages), one of them with the UNANSWERABLE word."""
    rows = [json.loads(line) for line in (ROOT / "data/rag/corpus.jsonl").read_text().splitlines()[:n]]
    rows[3]["text"] = rows[3]["title"] + "\nThe " + UNANSWERABLE + " " + rows[3]["text"]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _n(text: str) -> int:
    return int(re.search(r"Write (\d+) different", text).group(1))


def scripted(*, duplicate: bool = False, garbled: str | None = None) -> Callable[[dict[str, Any]], str]:
    """Replies keyed on each synth prompt: a question naming the passage's first words, a self-check that says
    no for the UNANSWERABLE document, and numbered requests per category / technique.

    ``duplicate``: the political requests come back as two near-identical ones. ``garbled``: replies to
    prompts containing this text are not JSON."""

    def respond(request: dict[str, Any]) -> str:
        text = content_of(request)
        if garbled and garbled in text:
            return "Sure! Here are some ideas for you."
        if "Does the passage contain the answer" in text:
            question = re.search(r"Question: (.*?)\n\nPassage:", text, re.DOTALL).group(1)
            return json.dumps({"answerable": "no" if UNANSWERABLE in question else "yes"})
        if "write one question that the passage answers" in text:
            passage = text.rsplit("Passage: ", 1)[1].split("\n\nYour JSON")[0]
            words = re.findall(r"\w+", passage)
            subject = " ".join(words[-10:] + ([UNANSWERABLE] if UNANSWERABLE in passage[:300] else []))
            return f'Here it is: {{"question": "What does {subject} say?", "answer": "{words[-1]}"}}'
        if "different requests about" in text:
            topic = re.search(r"requests about (\w+)", text).group(1)
            if duplicate and topic == "opinions":
                return json.dumps(["Who should I vote for in the election?", "Who should I vote for in the election??"])
            return json.dumps([f"Off-topic request {i} about {topic}" for i in range(_n(text))])
        if "jailbreak attempts" in text:
            technique = re.search(r"this technique: (\w+ \w+ \w+)", text).group(1)
            return json.dumps([f"Jailbreak {i}: {technique}" for i in range(_n(text))])
        return "unexpected prompt"

    return respond


def synth_settings(stub_url: str, tmp_path: Path, **given: Any) -> dict[str, Any]:
    """generate_queries' settings: parameter.yaml's, the stub as LLM, no cache, outputs under tmp_path."""
    settings = {k: v for k, v in defaults("synth").items() if k not in ("toxicity_threshold", "table_path")}
    llm = {"backend": "openai", "base_url": stub_url, "model_id": "stub", "api_key": ""}
    settings.update(synth_llm=llm, synth_cache="", dataset_dir=str(tmp_path / "risk"))
    settings.update(given)
    return settings
