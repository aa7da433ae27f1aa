"""RAGAS-style judges against the stub: hand-computed scores, empty cases, wrong-length verdicts, embeddings."""

from __future__ import annotations

import json
import re

import pytest

from servers.judge.answers.judges.ragas import average_precision, correctness_f1, cosine
from servers.judge.answers.run import build_items, run_answer_judge
from tests.judge.conftest import call_job, llm_settings
from tests.support.openai_stub import OpenAIStub, content_of, embed_text

pytestmark = pytest.mark.anyio


def between(text: str, start: str, end: str) -> str:
    return re.search(rf"{re.escape(start)}(.*?){re.escape(end)}", text, re.DOTALL).group(1)


def numbered(block: str) -> list[str]:
    return [line.split(". ", 1)[1] for line in block.splitlines() if line.strip()]


def responder(request) -> str:
    text = content_of(request)
    if '{"statements"' in text:
        answer = between(text, "\n\nAnswer: ", "\n\nYour JSON")
        return json.dumps({"statements": [s for s in answer.split(";") if s.strip()]})
    if "Statements (" in text:
        statements = numbered(between(text, "):\n", "\n\nVerdicts"))
        return json.dumps([int("yes" in s) for s in statements])
    if "useful for arriving" in text:
        passages = numbered(between(text, "):\n", "\n\nVerdicts"))
        if any("short" in p for p in passages):
            return "[1]"
        return json.dumps([int(p.startswith("useful")) for p in passages])
    if "Reference sentences (" in text:
        sentences = numbered(between(text, "):\n", "\n\nVerdicts"))
        return json.dumps([int("found" in s) for s in sentences])
    if '"noncommittal"' in text:
        answer = between(text, "\n\nAnswer: ", "\n\nYour JSON")
        return json.dumps({"questions": [f"{answer} {i}?" for i in range(3)], "noncommittal": int(answer == "nc")})
    answer = between(text, "\n\nAnswer: ", "\n\nReference answer")
    tp, fp, fn = (int(n) for n in re.findall(r"\d+", answer))
    return json.dumps({"TP": ["t"] * tp, "FP": ["f"] * fp, "FN": ["n"] * fn})


def test_formulas_by_hand() -> None:
    assert average_precision([1, 0, 1, 0]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision([0, 0]) == 0.0 and average_precision([0, 1]) == 0.5
    assert correctness_f1(2, 1, 1) == pytest.approx(2 / 3) and correctness_f1(0, 0, 0) is None
    assert cosine([1, 0], [1, 1]) == pytest.approx(2**-0.5)


async def run(kind: str, stub: OpenAIStub, tmp_path, **lists):
    items = build_items(**lists)
    return await call_job(
        run_answer_judge, kind, items, judge_llm=llm_settings(stub, max_retries=1), save_path=str(tmp_path),
        max_failed_fraction=0.5,  # some cases fail on purpose
    )  # fmt: skip


async def test_faithfulness_and_contexts(tmp_path) -> None:
    with OpenAIStub(responder=responder) as stub:
        faith = await run(
            "faithfulness", stub, tmp_path, q_ls=["q", "q"], pred_ls=["a yes; b no; c yes", ""], ret_psg=[["p"], ["p"]]
        )
        assert stub.request_count == 3  # 2 for the first answer; the empty answer has no statements: 1
        precision = await run(
            "context_precision", stub, tmp_path, q_ls=["q", "q", "q"], pred_ls=["", "", ""],
            ret_psg=[["useful a", "noise", "useful b"], [], ["short", "x"]], gt_ls=["r", "r", "r"],
        )  # fmt: skip
        recall = await run(
            "context_recall", stub, tmp_path, q_ls=["q", "q"], pred_ls=["", ""], ret_psg=[["p"], ["p"]],
            gt_ls=[["It is found here. It is missing. Also found!"], ""],
        )  # fmt: skip
    first, empty = faith["items"]
    assert first["faithfulness"] == pytest.approx(2 / 3) and first["requests"] == 2
    assert empty["status"] == "no_statements" and empty["faithfulness"] is None
    assert faith["aggregate"]["faithfulness"] == pytest.approx(2 / 3) and faith["aggregate"]["num_excluded"] == 1
    ok, none, short = precision["items"]
    assert ok["context_precision"] == pytest.approx((1 + 2 / 3) / 2)
    assert none["status"] == "no_contexts"
    assert short["status"] == "parse_error" and "expected a list of 2 verdicts, got 1" in short["error"]
    assert recall["items"][0]["context_recall"] == pytest.approx(2 / 3)
    assert recall["items"][1]["status"] == "no_reference"


async def test_embedding_judges(tmp_path) -> None:
    with OpenAIStub(responder=responder) as stub:
        relevancy = await run("answer_relevancy", stub, tmp_path, q_ls=["what?", "why?"], pred_ls=["it is", "nc"])
        embeds = [s for s in stub.served if s.path.endswith("/embeddings")]
        assert len(embeds) == 1  # the noncommittal answer needs no embeddings
        correctness = await run(
            "answer_correctness", stub, tmp_path, q_ls=["q", "q"], pred_ls=["2 1 1", "0 0 0"], gt_ls=["ref", "ref"]
        )
    q = embed_text("what?")
    want = sum(cosine(q, embed_text(f"it is {i}?")) for i in range(3)) / 3
    assert relevancy["items"][0]["answer_relevancy"] == pytest.approx(want)
    assert relevancy["items"][1]["answer_relevancy"] == 0.0 and relevancy["items"][1]["noncommittal"] == 1
    first, no_claims = correctness["items"]
    similarity = cosine(embed_text("2 1 1"), embed_text("ref"))
    assert first["answer_correctness"] == pytest.approx(0.75 * 2 / 3 + 0.25 * similarity)
    assert no_claims["status"] == "no_claims" and no_claims["answer_correctness"] is None
