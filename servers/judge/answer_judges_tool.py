"""The answer-judge MCP tools (IDK, citation, RAD-Bench, RAGAS-style): thin faces over ``answer_judges``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from servers.core.factory import tool_hints
from servers.judge.answer_judges import AnswerJudgeResult, build_items, run_answer_judge
from servers.judge.tool_specs import (
    DEFAULT_CACHE,
    DEFAULT_LLM,
    DEFAULT_SAVE,
    CachePath,
    LLMSpec,
    Retries,
    SavePath,
    Timeout,
    Workers,
)

Questions = Annotated[list[str], Field(description="the questions, one per item")]
Predictions = Annotated[list[str], Field(description="the answers to judge, one per question")]
Passages = Annotated[list[list[str]], Field(description="the passages shown with each question, in rank order")]
References = Annotated[list[Any], Field(description="reference answers, a text (or a list, first used) per question")]
Ids = Annotated[list[str] | None, Field(description="item ids (default: positions)")]


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def idk_judge(
    q_ls: Questions,
    pred_ls: Predictions,
    id_ls: Ids = None,
    judge_llm: LLMSpec = DEFAULT_LLM,
    judge_timeout: Timeout = 60.0,
    judge_max_retries: Retries = 3,
    judge_max_workers: Workers = 8,
    judge_cache: CachePath = DEFAULT_CACHE,
    save_path: SavePath = DEFAULT_SAVE,
) -> AnswerJudgeResult:
    """Does an answer say that it cannot answer (IDK), and does it attempt an answer? One request per answer.

    Per item `idk` (yes / partial / no -> 1 / 0.5 / 0, as MT-RAG) and `answer_attempted` (1 / 0);
    aggregate: the IDK rate and the answer-attempt rate over the items with status ok.
    """
    items = build_items(q_ls, pred_ls, id_ls=id_ls)
    return await run_answer_judge("idk", items, **_client(locals()))


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def citation_judge(
    q_ls: Questions,
    pred_ls: Predictions,
    ret_psg: Passages,
    id_ls: Ids = None,
    judge_llm: LLMSpec = DEFAULT_LLM,
    judge_timeout: Timeout = 60.0,
    judge_max_retries: Retries = 3,
    judge_max_workers: Workers = 8,
    judge_cache: CachePath = DEFAULT_CACHE,
    save_path: SavePath = DEFAULT_SAVE,
) -> AnswerJudgeResult:
    """Citation support (TREC RAG): for each answer sentence and each passage it cites ([1], [1, 2]), full /
    partial / none = 1 / 0.5 / 0. One request per (sentence, cited passage).

    Precision = mean over citations; recall = mean over sentences of their best citation (uncited = 0); F1.
    A citation of a passage number that was not shown counts as none (`invalid_citations`).
    """
    items = build_items(q_ls, pred_ls, ret_psg=ret_psg, id_ls=id_ls, need_passages=True)
    return await run_answer_judge("citation", items, **_client(locals()))


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def rag_judge(
    q_ls: Questions,
    pred_ls: Predictions,
    gt_ls: References,
    ret_psg: Passages,
    id_ls: Ids = None,
    judge_llm: LLMSpec = DEFAULT_LLM,
    judge_timeout: Timeout = 60.0,
    judge_max_retries: Retries = 3,
    judge_max_workers: Workers = 8,
    judge_cache: CachePath = DEFAULT_CACHE,
    save_path: SavePath = DEFAULT_SAVE,
) -> AnswerJudgeResult:
    """Overall 1-10 rating (RAD-Bench / MT-RAG RB_llm) of faithfulness, appropriateness and completeness against
    the reference and the passages; `rag_score` = rating / 10. One request per answer."""
    items = build_items(q_ls, pred_ls, ret_psg=ret_psg, gt_ls=gt_ls, id_ls=id_ls, need_passages=True)
    return await run_answer_judge("rag", items, **_client(locals()))


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def faithfulness(
    q_ls: Questions,
    pred_ls: Predictions,
    ret_psg: Passages,
    id_ls: Ids = None,
    judge_llm: LLMSpec = DEFAULT_LLM,
    judge_timeout: Timeout = 60.0,
    judge_max_retries: Retries = 3,
    judge_max_workers: Workers = 8,
    judge_cache: CachePath = DEFAULT_CACHE,
    save_path: SavePath = DEFAULT_SAVE,
) -> AnswerJudgeResult:
    """Faithfulness (RAGAS): the answer split into self-contained statements, each verified against the
    passages; score = supported / statements. No statements: no score (status no_statements). 2 requests per answer."""
    items = build_items(q_ls, pred_ls, ret_psg=ret_psg, id_ls=id_ls, need_passages=True)
    return await run_answer_judge("faithfulness", items, **_client(locals()))


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def answer_relevancy(
    q_ls: Questions,
    pred_ls: Predictions,
    id_ls: Ids = None,
    judge_llm: LLMSpec = DEFAULT_LLM,
    judge_timeout: Timeout = 60.0,
    judge_max_retries: Retries = 3,
    judge_max_workers: Workers = 8,
    judge_cache: CachePath = DEFAULT_CACHE,
    save_path: SavePath = DEFAULT_SAVE,
) -> AnswerJudgeResult:
    """Answer relevancy (RAGAS): 3 questions generated from the answer alone; score = mean cosine between the
    question and each generated one (judge_llm.embedding_model), 0 if the answer is noncommittal.
    1 chat + 1 embeddings request per answer."""
    items = build_items(q_ls, pred_ls, id_ls=id_ls)
    return await run_answer_judge("answer_relevancy", items, **_client(locals()))


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def context_precision(
    q_ls: Questions,
    gt_ls: References,
    ret_psg: Passages,
    id_ls: Ids = None,
    judge_llm: LLMSpec = DEFAULT_LLM,
    judge_timeout: Timeout = 60.0,
    judge_max_retries: Retries = 3,
    judge_max_workers: Workers = 8,
    judge_cache: CachePath = DEFAULT_CACHE,
    save_path: SavePath = DEFAULT_SAVE,
) -> AnswerJudgeResult:
    """Context precision (RAGAS): a usefulness verdict per ranked passage (towards the reference answer),
    then average precision over the verdicts (0 when none is useful). 1 request per question."""
    items = build_items(q_ls, [""] * len(q_ls), ret_psg=ret_psg, gt_ls=gt_ls, id_ls=id_ls, need_passages=True)
    return await run_answer_judge("context_precision", items, **_client(locals()))


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def context_recall(
    q_ls: Questions,
    gt_ls: References,
    ret_psg: Passages,
    id_ls: Ids = None,
    judge_llm: LLMSpec = DEFAULT_LLM,
    judge_timeout: Timeout = 60.0,
    judge_max_retries: Retries = 3,
    judge_max_workers: Workers = 8,
    judge_cache: CachePath = DEFAULT_CACHE,
    save_path: SavePath = DEFAULT_SAVE,
) -> AnswerJudgeResult:
    """Context recall (RAGAS): share of the reference answer's sentences attributable to the passages.
    1 request per question."""
    items = build_items(q_ls, [""] * len(q_ls), ret_psg=ret_psg, gt_ls=gt_ls, id_ls=id_ls, need_passages=True)
    return await run_answer_judge("context_recall", items, **_client(locals()))


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def answer_correctness(
    q_ls: Questions,
    pred_ls: Predictions,
    gt_ls: References,
    id_ls: Ids = None,
    judge_llm: LLMSpec = DEFAULT_LLM,
    judge_timeout: Timeout = 60.0,
    judge_max_retries: Retries = 3,
    judge_max_workers: Workers = 8,
    judge_cache: CachePath = DEFAULT_CACHE,
    save_path: SavePath = DEFAULT_SAVE,
) -> AnswerJudgeResult:
    """Answer correctness (RAGAS): claims classified TP / FP / FN against the reference, F1 = TP / (TP + 0.5
    (FP + FN)), combined 0.75 * F1 + 0.25 * cosine(answer, reference). 1 chat + 1 embeddings request per answer."""
    items = build_items(q_ls, pred_ls, gt_ls=gt_ls, id_ls=id_ls, need_reference=True)
    return await run_answer_judge("answer_correctness", items, **_client(locals()))


def _client(values: dict[str, Any]) -> dict[str, Any]:
    names = ("judge_llm", "judge_timeout", "judge_max_retries", "judge_max_workers", "judge_cache", "save_path")
    return {name: values[name] for name in names}
