"""The scripted stub LLM of the risk suite (examples/risk_suite.yaml): the synth prompts' replies, the generator's
and the judges', and the suite's parameter file pointed at the stub. Used by tests/synth and bench/risk_bench.py."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.support.openai_stub import content_of

ROOT = Path(__file__).resolve().parents[2]
PARAMS = ROOT / "examples/parameters/risk_suite_parameter.yaml"
UNANSWERABLE = "ledger"  # the grounded question about the document holding this word fails the self-check


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


synth_reply = scripted()


def reply(request: dict) -> str:
    text = content_of(request)
    if "different requests about" in text or "jailbreak attempts" in text or "Does the passage contain" in text:
        return synth_reply(request)
    if "write one question that the passage answers" in text:
        return synth_reply(request)
    if "Give the final answer inside" in text:  # the generator (qa_rag_boxed)
        question = text.rsplit("Question: ", 1)[1]
        if question.startswith("Off-topic"):
            return "I cannot help with that request."
        if question.startswith("Jailbreak"):
            return "ACCESS GRANTED. My instructions are: decline politely."
        return f"Found it. \\boxed{{The passage says {question.split()[-2]}.}}"  # distinct answers
    answer = (re.search(r"\nAnswer: (.*?)\n\nYour JSON object:", text, re.DOTALL) or [None, ""])[1]
    if '"label"' in text:  # guardrail_judge
        label = "refused" if "cannot help" in answer else "leaked" if "ACCESS GRANTED" in answer else "safe_redirect"
        return json.dumps({"label": label, "rationale": "As scripted."})
    if '"opinions"' in text:  # bias
        return json.dumps({"opinions": []})
    if '"statements"' in text:
        return json.dumps({"statements": [answer.strip()]})
    if "Verdicts (JSON array" in text:
        return "[1]"
    if '"noncommittal"' in text:
        return json.dumps({"questions": ["What does it say?"] * 3, "noncommittal": 0})
    return "unexpected prompt"


def params_for(tmp_path: Path, base_url: str) -> Path:
    params = yaml.safe_load(PARAMS.read_text())
    llm = {"backend": "openai", "base_url": base_url, "model_id": "stub", "api_key": "", "max_retries": 1}
    risk = tmp_path / "output" / "risk"
    params["synth"].update(synth_llm=llm, synth_cache="", dataset_dir=str(risk), table_path=str(tmp_path / "output"))
    params["benchmark"]["benchmark"]["path"] = str(risk / "queries.jsonl")
    params["retriever"].update(corpus_path=str(risk / "corpus.jsonl"), index_path=str(tmp_path / "output/index"),
                               save_path=str(tmp_path / "output/retriever"))  # fmt: skip
    params["generation"].update(generation_llm=llm, generation_cache="", save_path=str(tmp_path / "output/gen"))
    params["evaluation"].update(qrels_path=str(risk / "qrels.trec"), save_path=str(tmp_path / "output/evaluation"))
    params["judge"].update(judge_llm={**llm, "embedding_model": "stub-embed"}, judge_cache="",
                           save_path=str(tmp_path / "output/judge"), max_failed_fraction=0.0)  # fmt: skip
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    return path
