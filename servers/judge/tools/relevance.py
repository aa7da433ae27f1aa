"""Relevance tools: ``umbrela_judge``, ``judge_agreement`` and ``trec_rag_table``, thin MCP faces over
``relevance.run`` and ``relevance.trec_rag_table``. Settings (the keys of parameter.yaml) are keyword-only
without a default: the server fills them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.judge.common.parameters import CachePath, FailedFraction, LLMSpec, PromptFiles, SavePath
from servers.judge.common.progress import reporter
from servers.judge.common.prompting import LanguageParam
from servers.judge.relevance.fill import run_fill_qrels
from servers.judge.relevance.run import AgreementResult, UmbrelaResult, run_agreement, run_umbrela
from servers.judge.relevance.trec_rag_table import TrecRagTableResult, aggregate_rows, build_rows, write_table
from ultra_kit.factory import expands_own_env, tool_hints
from ultra_llm.batch_mode.passes import runs_in_passes

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


@runs_in_passes
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
    depth: Annotated[
        int, Field(description="passages judged per query in file mode (at most caps.depth)", ge=1, strict=True)
    ],
    k_values: Annotated[list[int], Field(description="cut-offs for P@k and AP@k")],
    judge_llm: LLMSpec,
    judge_cache: CachePath,
    save_path: SavePath,
    max_failed_fraction: FailedFraction,
    prompt_file: PromptFiles,
    language: LanguageParam,
) -> UmbrelaResult:
    """Grade passages 0-3 for relevance to a query with an LLM (UMBRELA) and write a qrels file.

    Inline: `query` and `passages`. Files: `queries_path`, a TREC `run_path` (top `depth` per query)
    and `corpus_path`. Per passage a grade and a status (ok / parse_error with the raw reply /
    error); per query the mean grade and, with relevant = grade >= 2, P@k, AP@k and MRR. The
    qrels file (`qid 0 docid grade`, graded pairs only) is ready for evaluate_trec. The tool fails,
    writing nothing, when no pair was graded or more than max_failed_fraction of them failed; `failed`
    counts the failures otherwise. prompt_file {umbrela_v1: file}: your own version of the prompt.
    """

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
        prompt_file=prompt_file,
        language=language,
        progress=reporter(ctx, "passages"),
    )


@tool_hints(read_only=False, idempotent=True)
def judge_agreement(
    *,
    llm_qrels_path: Annotated[str, Field(description="qrels written by umbrela_judge")],
    human_qrels_path: Annotated[
        str, Field(description="human qrels over the same pairs, or the label store of ultra annotate (.sqlite)")
    ],
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


@tool_hints(read_only=False, idempotent=True)
def trec_rag_table(
    umbrela_per_query: Annotated[
        dict[str, dict[str, Any]], Field(description="umbrela_judge's per_query: {qid: mean_score, P@k, ...}")
    ],
    nugget_per_query: Annotated[
        dict[str, dict[str, dict[str, Any]]], Field(description="nuggetize's per_query: {qid: {run: scores}}")
    ],
    citation_items: Annotated[
        list[dict[str, Any]], Field(description="citation_judge's items; id '<qid>/<run>' (or '<qid>')")
    ],
    idk_items: Annotated[list[dict[str, Any]], Field(description="idk_judge's items, same ids as citation_items")],
    *,
    save_path: SavePath,
) -> TrecRagTableResult:
    """The TREC RAG evaluation (open-rag-eval's TREC evaluator) as one table: a row per (query, run).

    Columns: qid, run; umbrela_* (the query's mean UMBRELA grade, P@k, AP@k, MRR); nugget_* (status and
    all / vital / weighted scores and their strict variants); citation_status, citation precision /
    recall / F1; idk_status, idk and answer_attempted. Scores of items that did not come out ok are
    empty. Written as CSV and JSON (a list of rows, also returned as `rows`); `aggregate` holds each run's column
    means.
    """
    columns, rows = build_rows(umbrela_per_query, nugget_per_query, citation_items, idk_items)
    csv_path, json_path = write_table(columns, rows, save_path)
    answered = {row["qid"] for row in rows}
    return {
        "table_path": str(csv_path),
        "table_json_path": str(json_path),
        "columns": columns,
        "num_rows": len(rows),
        "rows": rows,
        "aggregate": aggregate_rows(columns[2:], rows),
        "unanswered_queries": [str(q) for q in umbrela_per_query if str(q) not in answered],
    }


class FillQrelsResult(TypedDict):
    """Per run and measure before / after, Judged@k, tau-b per measure, the flips, the counts and the files."""

    per_run: dict[str, dict[str, Any]]
    kendall_tau_b: dict[str, float | None]
    significance_flips: list[dict[str, Any]]
    fill_counts: dict[str, int]
    failed: dict[str, Any]
    usage: dict[str, Any]
    merged_qrels_path: str
    origin_path: str
    result_path: str


@runs_in_passes
@tool_hints(read_only=False, idempotent=True, open_world=True)
@expands_own_env("judge_llm")  # read only when the holes are judged live: recorded grades need no key
async def fill_qrels(
    *,
    human_qrels_path: Annotated[str, Field(description="the qrels to fill (their grades are kept)")],
    run_paths: Annotated[
        list[str], Field(description="the runs whose top fill_depth documents are looked at (caps.fill_runs at most)")
    ],
    queries_path: Annotated[str, Field(description="queries JSONL or TSV (qid, query)")],
    corpus_path: Annotated[str, Field(description="corpus JSONL (docid, text, optional title)")],
    fill_depth: Annotated[
        int,
        Field(
            description="holes: unjudged documents in each run's top fill_depth (caps.fill_depth or less)",
            ge=1,
            strict=True,
        ),
    ],
    fill_budget: Annotated[int | None, Field(description="judgments at most (null: every hole)", ge=0, strict=True)],
    fill_measures: Annotated[
        list[str], Field(description="measures compared before and after, e.g. ndcg@20 (caps.fill_measures at most)")
    ],
    relevant_grade: Annotated[int, Field(description="relevant = grade >= this (trec_eval -l)")],
    fill_alpha: Annotated[float, Field(description="significance level of the pairwise run tests", gt=0, lt=1)],
    fill_resamples: Annotated[int, Field(description="random sign flips of the pairwise run tests", ge=1)],
    fill_seed: Annotated[int, Field(description="seed of the pairwise run tests", ge=0)],
    fill_recorded_qrels: Annotated[
        str, Field(description="qrels of grades made earlier, read for the holes instead of asking ('' = UMBRELA)")
    ],
    judge_llm: LLMSpec,
    judge_cache: CachePath,
    save_path: SavePath,
    max_failed_fraction: FailedFraction,
    ctx: Context | None = None,
) -> FillQrelsResult:
    """Judge the holes of a pool with UMBRELA (only them, within a budget) and report what the filling changed.

    Holes: (query, document) pairs in some run's top fill_depth that the qrels do not grade, for the queries
    the qrels have; at most fill_budget of them, round-robin over ranks, queries and runs. Writes the merged
    qrels (human grades kept, LLM grades added) and a side file of the LLM-origin grades. Reports per run and
    measure the value before and after, Judged@fill_depth before and after, Kendall's tau-b between the runs'
    rankings under the two qrels, and every pair of runs whose paired-test decision (p < fill_alpha) flips.
    With fill_recorded_qrels the holes' grades are read from that file (a hole it lacks fails, counted), nothing sent.
    """
    return await run_fill_qrels(
        human_qrels_path=human_qrels_path, run_paths=run_paths, queries_path=queries_path, corpus_path=corpus_path,
        fill_depth=fill_depth, fill_budget=fill_budget, fill_measures=fill_measures, relevant_grade=relevant_grade,
        fill_alpha=fill_alpha, fill_resamples=fill_resamples, fill_seed=fill_seed,
        fill_recorded_qrels=fill_recorded_qrels, judge_llm=judge_llm,
        judge_cache=judge_cache, save_path=save_path, max_failed_fraction=max_failed_fraction,
        progress=reporter(ctx, "holes"),
    )  # type: ignore[return-value]  # fmt: skip


TOOLS = [umbrela_judge, judge_agreement, trec_rag_table, fill_qrels]
