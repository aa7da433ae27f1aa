"""Estimate mode's stand-in replies: which cached answer stands in, the placeholder and its example, and where
a tool fed stand-ins may write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.llm.conftest import stub_settings
from tests.support.openai_stub import OpenAIStub
from ultra_base.errors import InputError
from ultra_base.write_hooks import tool_call
from ultra_kit.files import atomic_write_text, result_path
from ultra_llm.asking import ask_until_readable
from ultra_llm.cache import AnswerCache, CachedAnswer, encode
from ultra_llm.client import LLMClient
from ultra_llm.estimate import ESTIMATE_ENV, check_estimate_write, note_standin, standins_in_call
from ultra_llm.replies import Reply, labels
from ultra_llm.standins import PLACEHOLDER, stand_in, stand_in_vectors

pytestmark = pytest.mark.anyio
VERDICTS = Reply.of(listed=True, verdicts=labels(yes=1, no=0))


def said(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def fill(cache_path: Path, rows: list[tuple[str, str, str, str, int]]) -> None:
    """(model, prompt, question, answer, completion tokens) rows into an answer cache."""
    cache = AnswerCache(cache_path)
    for i, (model, prompt, question, answer, tokens) in enumerate(rows):
        request = {"messages": said(question), "sampling": {}}
        cache.put(f"k{i}", model_id=model, prompt=prompt, request=request, answer=CachedAnswer(answer, None, 5, tokens))
    cache.close()


def test_the_same_request_then_the_nearest_like_one_then_a_placeholder_stands_in(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    fill(cache, [("old", "grade@v1", "short question", "A", 3), ("old", "grade@v1", "a much longer question " * 9,
          "B", 4), ("old", "other@v1", "short question!", "C", 5)])  # fmt: skip
    same = stand_in(cache, encode(said("short question")), "grade@v2")
    assert (same.text, same.completion_tokens, same.kind) == ("A", 3, "same")  # another model's answer to it
    like = stand_in(cache, encode(said("a much longer question " * 8)), "grade@v2")
    assert (like.text, like.kind) == ("B", "like")  # the same prompt, nearest in length (not "A", not "C")
    nothing = stand_in(cache, encode(said("x")), "unknown@v1")
    assert (nothing.text, nothing.kind) == (PLACEHOLDER, "placeholder")
    assert stand_in(None, encode(said("short question")), "grade@v1").kind == "placeholder"  # no cache at all
    fill(cache, [("old", "unknown@v1", "x", "D", 1)])  # the cache grew: the index is read again
    assert stand_in(cache, encode(said("x")), "unknown@v1").text == "D"


def test_vectors_stand_in_with_the_length_of_the_cache_s_embeddings(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path / "cache.sqlite")
    cache.put("e", model_id="m", prompt="embeddings", request={"input": ["a"]},
              answer=CachedAnswer(json.dumps([[0.1] * 5]), None, 1, 0))  # fmt: skip
    cache.close()
    assert stand_in_vectors(tmp_path / "cache.sqlite", 2) == [[1.0, 0.0, 0.0, 0.0, 0.0]] * 2
    assert stand_in_vectors(None, 1) == [[1.0, 0.0, 0.0]]


async def test_an_unsent_request_gets_the_reply_s_example_and_is_never_repaired(tmp_path: Path, monkeypatch) -> None:
    """No cached answer: the placeholder is unreadable, so the reply's example stands in (the length asked for),
    with no repair request; a like answer of the wrong length gives way to the example too. Nothing is cached."""
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(ESTIMATE_ENV, str(ledger))
    fill(tmp_path / "cache.sqlite", [("old", "verdicts@v1", "other statements", '{"verdicts": ["yes"]}', 4)])
    with OpenAIStub() as stub:
        async with LLMClient(stub_settings(stub), AnswerCache(tmp_path / "cache.sqlite")) as client:
            for prompt in ("fresh@v1", "verdicts@v1"):
                answer = await ask_until_readable(
                    client, said("check 3 statements"), {}, version=prompt, reply=VERDICTS, retries=2,
                    reasoning_when_blank=False, length=3,
                )  # fmt: skip
                assert answer.status == "ok" and answer.value == [1, 1, 1] and answer.completion.standin
        assert stub.served == []
    records = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert [(r["prompt"], r["standin"]) for r in records] == [("fresh@v1", "placeholder"), ("verdicts@v1", "like")]
    assert len(AnswerCache(tmp_path / "cache.sqlite")) == 1  # stand-ins are never cached


def test_results_go_to_the_scratch_folder_and_stand_ins_write_nothing_a_setting_names(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv(ESTIMATE_ENV, str(tmp_path / "scratch" / "ledger.jsonl"))
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    target = result_path(tmp_path / "save", "judge", ".json")
    assert target.parent == tmp_path / "scratch" / "results" and not (tmp_path / "save").exists()
    named = tmp_path / "data" / "queries.jsonl"
    with tool_call():  # what the kit enters around every tool call
        atomic_write_text(named, "written before any stand-in\n")  # a tool that got real (cached) answers
        note_standin()
        assert standins_in_call() == 1
        with pytest.raises(InputError, match="does not write files from stand-in replies"):
            atomic_write_text(named, "from stand-ins\n")
        check_estimate_write(tmp_path / "scratch" / "results" / "x.json")  # the scratch folder is fine
    assert named.read_text() == "written before any stand-in\n"
    assert standins_in_call() == 0  # the count belongs to one tool call
