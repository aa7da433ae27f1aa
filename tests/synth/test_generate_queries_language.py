"""generate_queries in a target language: the prompts name it, and questions detected in another language are
dropped and counted (scripted zh and ar replies from the stub LLM; the detector is lingua, offline)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest

from servers.synth.tools.queries import generate_queries
from tests.support.extras import requires
from tests.support.openai_stub import OpenAIStub, content_of
from tests.synth.conftest import small_corpus, synth_settings

pytestmark = requires("lingua")

QUESTIONS = {
    "zh": ["这份文件说明了哪些法院程序？", "申请人需要提交哪些材料？", "这项服务的费用是多少？"],
    "ar": [
        "ما هي إجراءات المحكمة التي يشرحها هذا المستند؟",
        "ما الوثائق التي يجب على المتقدم تقديمها؟",
        "كم تكلفة هذه الخدمة؟",
    ],
}
ENGLISH = "Which court procedures does this document explain to the reader?"


def scripted(language: str):
    """Every fourth grounded question comes back in English (a model ignoring the language line)."""
    asked = {"n": 0}

    def respond(request: dict) -> str:
        text = content_of(request)
        if "Does the passage contain the answer" in text:
            return json.dumps({"answerable": "yes"})
        if "write one question that the passage answers" in text:
            n = asked["n"] = asked["n"] + 1
            question = ENGLISH if n % 4 == 0 else QUESTIONS[language][n % 3] + f" ({n})"
            return json.dumps({"question": question, "answer": "42"}, ensure_ascii=False)
        count = int(re.search(r"Write (\d+) different", text).group(1))
        return json.dumps({"requests": QUESTIONS[language][:count], "attempts": QUESTIONS[language][:count]})

    return respond


@pytest.mark.parametrize(("language", "name"), [("zh", "Chinese"), ("ar", "Arabic")])
def test_questions_in_the_target_language_are_kept_others_dropped_and_counted(
    tmp_path: Path, monkeypatch, language: str, name: str
) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    corpus = small_corpus(tmp_path / "corpus.jsonl")
    n = {"grounded": 8, "off_topic": 0, "jailbreak": 0}
    settings = synth_settings("", tmp_path, corpus_path=str(corpus), n_per_kind=n, language=language)
    with OpenAIStub(scripted(language)) as stub:
        settings["synth_llm"] = {**settings["synth_llm"], "base_url": stub.base_url}
        result = anyio.run(lambda: generate_queries(**settings))
        systems = [r["messages"][0]["content"] for r in stub.chat_requests()]
    rows = [json.loads(line) for line in Path(result["dataset_path"]).read_text(encoding="utf-8").splitlines()]
    counts = result["synth_counts"]
    assert counts["discarded"]["wrong_language"] == 2  # questions 4 and 8 of 8 were English
    assert ENGLISH not in {row["query"] for row in rows}
    assert len(rows) + counts["discarded"]["duplicate"] == 6  # same question, other number: a near-duplicate
    assert all(f"write in {name}" in system for system in systems)
    saved = json.loads((Path(result["dataset_path"]).parent / "counts.json").read_text(encoding="utf-8"))
    assert saved["language"] == language


def test_english_adds_no_line_and_checks_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    corpus = small_corpus(tmp_path / "corpus.jsonl")
    n = {"grounded": 4, "off_topic": 0, "jailbreak": 0}
    settings = synth_settings("", tmp_path, corpus_path=str(corpus), n_per_kind=n, language="en")
    with OpenAIStub(scripted("zh")) as stub:
        settings["synth_llm"] = {**settings["synth_llm"], "base_url": stub.base_url}
        result = anyio.run(lambda: generate_queries(**settings))
        contents = [content_of(r) for r in stub.chat_requests()]
    assert result["synth_counts"]["discarded"]["wrong_language"] == 0 and result["synth_counts"]["total"] == 4
    assert not any("Language:" in text for text in contents)
