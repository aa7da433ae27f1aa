"""factual_correctness against the local stub: scripted claims and NLI verdicts, hand-computed precision/recall/F1,
unreadable replies counted as failures and never scored, the claims and verdicts in the result file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from servers.judge.answers.judges.reference import factual_scores
from servers.judge.answers.run import build_items, run_answer_judge
from servers.judge.common.prompting import load_prompt
from tests.judge.conftest import call_job, llm_settings
from tests.support.openai_stub import OpenAIStub, content_of

pytestmark = pytest.mark.anyio


def between(text: str, start: str, end: str) -> str:
    return re.search(rf"{re.escape(start)}(.*?){re.escape(end)}", text, re.DOTALL).group(1)


def responder(request) -> str:
    """Claims: the text split at ';'. Verdicts: entailment when the premise holds the claim, contradiction when it
    holds 'false that <claim>', else neutral. Texts with 'garbage' / 'miscount' get unreadable replies."""
    text = content_of(request)
    if '{"claims"' in text:
        source = between(text, "\n\nText: ", "\n\nYour JSON")
        if "garbage" in source:
            return "I cannot do that."
        return json.dumps({"claims": [c.strip() for c in source.split(";") if c.strip()]})
    premise = between(text, "\n\nPremise: ", "\n\nClaims (")
    claims = [line.split(". ", 1)[1] for line in between(text, "):\n", "\n\nVerdicts").splitlines()]
    if "miscount" in premise:
        return json.dumps(["neutral"] * (len(claims) + 1))
    verdicts = [
        "contradiction" if f"false that {c}" in premise else "entailment" if c in premise else "neutral" for c in claims
    ]
    return json.dumps(verdicts)


def test_scores_by_hand() -> None:
    assert factual_scores(["entailment", "neutral", "contradiction"], ["entailment", "neutral"]) == pytest.approx(
        {"factual_precision": 1 / 3, "factual_recall": 1 / 2, "factual_f1": 0.4}
    )
    assert factual_scores(["neutral"], ["contradiction"])["factual_f1"] == 0.0


async def test_factual_correctness_against_the_stub(tmp_path) -> None:
    answers = [
        "Paris is in France; Paris has two million people; Paris is in Spain",
        "",  # no claim: nothing to score
        "garbage answer",  # the claim extraction never comes back readable
        "Lyon is in France",
    ]
    references = [
        "Paris is in France; Paris is the capital; it is false that Paris is in Spain",
        "Rome is in Italy",
        "Bern is in Switzerland",
        "miscount Lyon is in France",  # verdict lists of the wrong length: a parse error, not a score
    ]
    items = build_items(["q"] * 4, answers, gt_ls=references, id_ls=["a", "b", "c", "d"])
    with OpenAIStub(responder=responder) as stub:
        result = await call_job(
            run_answer_judge, "factual_correctness", items, judge_llm=llm_settings(stub, max_retries=1),
            save_path=str(tmp_path), max_failed_fraction=0.7,
        )  # fmt: skip
    first, empty, garbage, miscount = result["items"]
    assert first["status"] == "ok" and first["requests"] == 4
    assert [(c["claim"], c["verdict"]) for c in first["answer_claims"]] == [
        ("Paris is in France", "entailment"),
        ("Paris has two million people", "neutral"),
        ("Paris is in Spain", "contradiction"),
    ]
    assert [c["verdict"] for c in first["reference_claims"]] == ["entailment", "neutral", "neutral"]
    assert first["factual_precision"] == pytest.approx(1 / 3)
    assert first["factual_recall"] == pytest.approx(1 / 3)
    assert first["factual_f1"] == pytest.approx(1 / 3)
    assert empty["status"] == "no_answer_claims" and "factual_f1" not in empty
    assert garbage["status"] == "parse_error" and "factual_f1" not in garbage
    assert garbage["raw"] == "I cannot do that." and garbage["requests"] == 3  # 2 tries + the reference's claims
    assert miscount["status"] == "parse_error" and "expected a list of 1 verdicts" in miscount["error"]
    assert "factual_f1" not in miscount
    aggregate = result["aggregate"]
    assert aggregate["factual_f1"] == pytest.approx(1 / 3) and aggregate["num_factual_f1"] == 1
    assert aggregate["num_excluded"] == 3
    assert result["failed"]["count"] == 2 and result["failed"]["total"] == 3  # no_answer_claims is not a failure
    saved = json.loads(Path(result["result_path"]).read_text())
    assert saved["items"][0]["answer_claims"][2] == {"claim": "Paris is in Spain", "verdict": "contradiction"}
    assert saved["items"][0]["id"] == "a"
    assert saved["prompt"]["name"] == "claims_v1" and saved["prompt"]["sha256"] == load_prompt("claims_v1").sha256


async def test_all_failed_writes_nothing(tmp_path) -> None:
    items = build_items(["q"], ["garbage"], gt_ls=["x"])
    with OpenAIStub(responder=responder) as stub, pytest.raises(Exception, match="every one of 1 judgments failed"):
        await call_job(
            run_answer_judge, "factual_correctness", items, judge_llm=llm_settings(stub, max_retries=0),
            save_path=str(tmp_path), max_failed_fraction=0.5,
        )  # fmt: skip
    assert not list(tmp_path.iterdir())
