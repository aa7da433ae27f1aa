"""generate_queries with synth_llm.structured_output: each prompt's reply schema is sent (lists sized to n),
the replies are read as before; without it nothing changes in the requests."""

from __future__ import annotations

import json
import re

import anyio

from servers.synth.asking import REPLY_SCHEMAS
from servers.synth.tools.queries import generate_queries
from tests.support.openai_stub import OpenAIStub, content_of
from tests.synth.conftest import scripted, small_corpus, synth_settings

N = {"grounded": 2, "off_topic": 2, "jailbreak": 1}
PROMPTS = {"write one question": "grounded_question_v1", "Does the passage contain": "self_check_v1",
           "different requests about": "off_topic_v2", "jailbreak attempts": "jailbreak_v2"}  # fmt: skip


def prompt_of(request: dict) -> str:
    text = content_of(request)
    return next(name for mark, name in PROMPTS.items() if mark in text)


def generate(tmp_path, **llm) -> tuple[dict, list[dict]]:
    corpus = small_corpus(tmp_path / "corpus.jsonl")
    with OpenAIStub(scripted()) as stub:
        settings = synth_settings(stub.base_url, tmp_path, corpus_path=str(corpus), n_per_kind=N)
        settings["synth_llm"].update(llm)
        result = anyio.run(lambda: generate_queries(**settings))
        return result, stub.chat_requests()


def test_each_prompt_sends_its_schema(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    result, requests = generate(tmp_path, structured_output=True)
    assert {prompt_of(r) for r in requests} == set(REPLY_SCHEMAS)
    for request in requests:
        name = prompt_of(request)
        sent = request["response_format"]["json_schema"]
        assert sent["name"] == name and sent["strict"] is True
        if name in ("off_topic_v2", "jailbreak_v2"):  # the list holds exactly the n asked for
            (listed,) = sent["schema"]["properties"].values()
            n = int(re.search(r"Write (\d+) different", content_of(request)).group(1))
            assert (
                listed["minItems"]
                == listed["maxItems"]
                == n
                == N["off_topic" if name == "off_topic_v2" else "jailbreak"]
            )
        else:
            assert sent["schema"] == REPLY_SCHEMAS[name]
    generated = result["synth_counts"]["generated"]
    assert generated["grounded"]["grounded"] == 2 and all(v == 2 for v in generated["off_topic"].values())


def test_without_structured_output_no_schema_is_sent(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    result, requests = generate(tmp_path)
    assert requests and all("response_format" not in r for r in requests)
    assert json.dumps(result["synth_counts"]["generated"]["off_topic"]).count("2") == 4
