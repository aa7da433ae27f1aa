"""The judge server's tools: ``umbrela_judge`` and ``judge_agreement`` (thin MCP faces over ``jobs``) and the list
of every tool. Settings (the keys of parameter.yaml) are keyword-only without a default: the server fills them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from servers.judge.answer_judges_tool import ANSWER_TOOLS
from servers.judge.batch_tools import BATCH_TOOLS, register_judge_tools
from servers.judge.hallucination_tool import hallucination_judge
from servers.judge.jobs import AgreementResult, UmbrelaResult, run_agreement, run_umbrela
from servers.judge.nuggets_tool import nuggetize
from servers.judge.tool_parameters import CachePath, FailedFraction, LLMSpec, SavePath
from servers.judge.trec_rag_table import trec_rag_table
from ultra_kit.factory import tool_hints

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


@tool_hints(read_only=False, idempotent=True, open_world=True)
async def umbrela_judge(
    *,
    ctx: Context | None = None,
    query: Annotated[str | None, Field(description="inline mode: the query (then give passages)")] = None,
    passages: Annotated[
        dict[str, str] | list[str] | None, Field(description="inline mode: {docid: text} or a list of texts")
    ] = None,
    query_id: Annotated[str, Field(description="inline mode: the query id written to the qrels")] = "q1",
    queries_path: Annotated[str, Field(description="file mode: queries JSONL or TSV (qid, query)")],
    run_path: Annotated[str, Field(description="file mode: TREC run whose top `depth` passages are judged")],
    corpus_path: Annotated[str, Field(description="file mode: corpus JSONL (docid, text, optional title)")],
    depth: Annotated[int, Field(description="passages judged per query in file mode", ge=1)],
    k_values: Annotated[list[int], Field(description="cut-offs for P@k and AP@k")],
    judge_llm: LLMSpec,
    judge_cache: CachePath,
    save_path: SavePath,
    max_failed_fraction: FailedFraction,
) -> UmbrelaResult:
    """Grade passages 0-3 for relevance to a query with an LLM (UMBRELA) and write a qrels file.

    Inline: `query` and `passages`. Files: `queries_path`, a TREC `run_path` (top `depth` per query)
    and `corpus_path`. Per passage a grade and a status (ok / parse_error with the raw reply /
    error); per query the mean grade and, with relevant = grade >= 2, P@k, AP@k and MRR. The
    qrels file (`qid 0 docid grade`, graded pairs only) is ready for evaluate_trec. The tool fails,
    writing nothing, when no pair was graded or more than max_failed_fraction of them failed; `failed`
    counts the failures otherwise.
    """

    async def progress(done: int, total: int) -> None:
        if ctx is not None:
            await ctx.report_progress(done, total, f"judged {done}/{total} passages")

    return await run_umbrela(
        query=query,
        passages=passages,
        query_id=query_id,
        queries_path=queries_path,
        run_path=run_path,
        corpus_path=corpus_path,
        depth=depth,
        k_values=k_values,
        judge_llm=judge_llm,
        judge_cache=judge_cache,
        save_path=save_path,
        max_failed_fraction=max_failed_fraction,
        progress=progress,
    )


@tool_hints(read_only=False, idempotent=True)
def judge_agreement(
    *,
    llm_qrels_path: Annotated[str, Field(description="qrels written by umbrela_judge")],
    human_qrels_path: Annotated[str, Field(description="human qrels over the same pairs")],
    run_paths: Annotated[list[str], Field(description="runs to rank under both qrels (may be empty)")],
    measure: Annotated[str, Field(description="the measure that ranks the runs, e.g. ndcg@10")],
    relevant_grade: Annotated[int, Field(description="binary relevance: grade >= this")],
    save_path: SavePath,
) -> AgreementResult:
    """Compare LLM relevance grades with human ones: Cohen's kappa, confusion matrix, system rankings.

    Over the pairs both qrels grade: kappa on the grades and on relevant = grade >= relevant_grade,
    the confusion matrix (rows human, columns LLM) and per-grade agreement. With run_paths, each
    run is scored under `measure` with both qrels, and Kendall's tau / Spearman's rho compare the
    two rankings of the runs.
    """
    return run_agreement(
        llm_qrels_path=llm_qrels_path,
        human_qrels_path=human_qrels_path,
        run_paths=run_paths,
        measure=measure,
        relevant_grade=relevant_grade,
        save_path=save_path,
    )


TOOLS = [
    umbrela_judge,
    judge_agreement,
    nuggetize,
    *ANSWER_TOOLS,
    hallucination_judge,
    trec_rag_table,
    *BATCH_TOOLS,
]
register_judge_tools(TOOLS)
