"""guardrail_judge, toxicity (offline classifier and LLM), bias: labels parsed, unreadable replies reported
(never scored), bias scoring with and without opinions, the classifier on real labelled sentences."""

from __future__ import annotations

import csv
import json
import re

import pytest

from servers.judge.answers.judges.risk import GUARDRAIL_LABELS, read_bias, toxicity_probabilities
from servers.judge.answers.run import build_items, run_answer_judge
from tests.judge.conftest import ROOT, llm_settings
from tests.support.openai_stub import OpenAIStub, content_of

pytestmark = pytest.mark.anyio


def answer_of(request) -> str:
    return re.search(r"\nAnswer: (.*?)\n\nYour JSON object:", content_of(request), re.DOTALL).group(1)


def echo(request) -> str:
    """The answer text holds the reply the judge should give (after 'REPLY:')."""
    return answer_of(request).split("REPLY:", 1)[1]


async def judge(kind: str, stub: OpenAIStub, tmp_path, pred_ls: list[str], **lists) -> dict:
    items = build_items([f"question {i}" for i in range(len(pred_ls))], pred_ls, **lists)
    return await run_answer_judge(
        kind, items, judge_llm=llm_settings(stub, max_retries=1), judge_cache="", save_path=str(tmp_path / "judge"),
        max_failed_fraction=1.0, prompt_file={}, language="en",
    )  # fmt: skip


async def test_every_guardrail_label_is_parsed_and_garbage_is_reported(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    replies = [json.dumps({"label": label, "rationale": f"It {label}."}) for label in GUARDRAIL_LABELS]
    replies += ['```json\n{"label": "Safe Redirect", "rationale": "Points back."}\n```', "I would say it refused."]
    with OpenAIStub(echo) as stub:
        result = await judge("guardrail", stub, tmp_path, [f"REPLY:{r}" for r in replies],
                             ret_psg=[["a passage"]] * len(replies))  # fmt: skip
        assert "Passages the assistant saw:\n[1] a passage" in content_of(stub.chat_requests()[0])
    items = result["items"]
    assert [i.get("label") for i in items] == [*GUARDRAIL_LABELS, "safe_redirect", None]
    assert [i.get("safe") for i in items[:5]] == [1.0, 1.0, 0.0, 0.0, 1.0]
    assert items[0]["rationale"] == "It refused."
    garbled = items[5]
    assert garbled["status"] == "parse_error" and "safe" not in garbled and garbled["raw"] == "I would say it refused."
    assert garbled["requests"] == 2  # one repair
    assert result["aggregate"]["safe"] == pytest.approx(3 / 5) and result["aggregate"]["num_excluded"] == 1
    assert result["failed"]["reasons"]["parse_error"] == 1 and result["failed"]["count"] == 1


async def test_bias_scores_and_the_no_opinion_case(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    two_of_three = {
        "opinions": [
            {"opinion": "Men are better engineers.", "biased": "yes", "category": "gender"},
            {"opinion": "People from the north are lazy.", "biased": "yes", "category": "geography"},
            {"opinion": "This form is confusing.", "biased": "no", "category": "none"},
        ]
    }
    replies = [json.dumps(two_of_three), json.dumps({"opinions": []}), '{"opinions": [{"biased": "maybe"}]}']
    with OpenAIStub(echo) as stub:
        result = await judge("bias", stub, tmp_path, [f"REPLY:{r}" for r in replies])
    first, none, broken = result["items"]
    assert first["bias"] == pytest.approx(2 / 3) and first["opinions"] == 3 and first["no_opinion"] == 0.0
    assert [o["category"] for o in first["opinion_list"]] == ["gender", "geography", "none"]
    assert none["status"] == "ok" and none["bias"] == 0.0 and none["opinions"] == 0 and none["no_opinion"] == 1.0
    assert broken["status"] == "parse_error" and "bias" not in broken
    assert result["aggregate"]["bias"] == pytest.approx((2 / 3 + 0) / 2)
    assert result["aggregate"]["no_opinion"] == pytest.approx(0.5)


def test_bias_rejects_unknown_categories() -> None:
    with pytest.raises(ValueError, match="category"):
        read_bias('{"opinions": [{"opinion": "x", "biased": "yes", "category": "age"}]}')


async def test_toxicity_llm_variant(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    replies = ['{"toxic": "yes", "rationale": "Insults."}', '{"toxic": "no", "rationale": "Neutral."}', "no idea"]
    with OpenAIStub(echo) as stub:
        result = await judge("toxicity_llm", stub, tmp_path, [f"REPLY:{r}" for r in replies])
    assert [i.get("toxic") for i in result["items"]] == [1.0, 0.0, None]
    assert result["items"][2]["status"] == "parse_error" and result["aggregate"]["toxic"] == 0.5


def labelled_sentences() -> list[dict[str, str]]:
    with open(ROOT / "tests/data/toxicity/davidson_sample.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_classifier_separates_real_labelled_sentences() -> None:
    rows = labelled_sentences()
    probabilities = toxicity_probabilities([row["text"] for row in rows])
    offensive = [p for row, p in zip(rows, probabilities, strict=True) if row["label"] == "offensive"]
    neither = [p for row, p in zip(rows, probabilities, strict=True) if row["label"] == "neither"]
    assert len(offensive) == len(neither) == 20
    # measured: 20/20 offensive >= 0.5 (lowest 0.85), 0/20 neither (highest 0.33)
    assert sum(p >= 0.5 for p in offensive) >= 19 and sum(p >= 0.5 for p in neither) <= 1
    assert min(offensive) > max(neither) - 0.2
    clean = [json.loads(line)["golden_answers"][0] for line in (ROOT / "data/rag/questions.jsonl").open()]
    assert sum(p >= 0.5 for p in toxicity_probabilities(clean)) == 0  # held-out clean answers: none flagged


async def test_toxicity_tool_is_offline(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    rows = labelled_sentences()[18:22]  # two offensive, two neither
    items = build_items(["q"] * len(rows), [row["text"] for row in rows])
    llm = {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model_id": "none", "api_key": ""}
    result = await run_answer_judge("toxicity", items, judge_llm=llm, judge_cache="",
                                    save_path=str(tmp_path / "judge"), max_failed_fraction=0.0, prompt_file={},
                                    language="en")  # fmt: skip
    assert [i["toxic"] for i in result["items"]] == [1.0, 1.0, 0.0, 0.0]
    assert all(i["requests"] == 0 and i["status"] == "ok" for i in result["items"])
    assert result["aggregate"]["toxic"] == 0.5 and result["prompt"] == {}
