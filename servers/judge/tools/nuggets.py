"""The ``nuggetize`` MCP tool: a thin face over ``nuggets.run.run_nuggetize``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from servers.judge.common.parameters import CachePath, FailedFraction, LLMSpec, PromptFiles, SavePath
from servers.judge.common.progress import reporter
from servers.judge.common.prompting import LanguageParam
from servers.judge.nuggets.run import NuggetizeResult, run_nuggetize
from ultra_kit.factory import tool_hints
from ultra_llm.batch_mode.passes import runs_in_passes

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


@runs_in_passes
@tool_hints(read_only=False, idempotent=True, open_world=True)
async def nuggetize(
    *,
    query: Annotated[str | None, Field(description="inline mode: the query (then give answers)")] = None,
    passages: Annotated[
        dict[str, str] | list[str] | None, Field(description="inline mode: {docid: text} or a list of texts")
    ] = None,
    answers: Annotated[
        dict[str, str] | list[str] | str | None, Field(description="inline mode: {run: answer}, a list or one text")
    ] = None,
    query_id: Annotated[str, Field(description="inline mode: the query id")] = "q1",
    scores: Annotated[
        dict[str, dict[str, int | None]] | None,
        Field(description="UMBRELA grades {qid: {docid: grade}} (umbrela_judge's `scores`); None = use every passage"),
    ] = None,
    nuggets_path: Annotated[
        str, Field(description="stored nuggets (a previous nuggetize's nuggets_path) to reuse; '' = create")
    ] = "",
    queries_path: Annotated[str, Field(description="file mode: queries JSONL or TSV (qid, query)")],
    run_path: Annotated[str, Field(description="file mode: TREC run whose top `depth` passages make the nuggets")],
    corpus_path: Annotated[str, Field(description="file mode: corpus JSONL (docid, text, optional title)")],
    answers_path: Annotated[str, Field(description="file mode: JSONL answers (qid, answer, optional run)")],
    depth: Annotated[int, Field(description="passages per query in file mode (at most caps.depth)", ge=1, strict=True)],
    min_judgment: Annotated[int, Field(description="with scores: use passages graded >= this")],
    max_nuggets: Annotated[
        int, Field(description="nuggets per query at most (caps.max_nuggets or less)", ge=1, strict=True)
    ],
    nugget_top_k: Annotated[int, Field(description="assign the first k nuggets, vital first; 0 = all", ge=0)],
    judge_llm: LLMSpec,
    judge_cache: CachePath,
    save_path: SavePath,
    max_failed_fraction: FailedFraction,
    prompt_file: PromptFiles,
    language: LanguageParam,
    ctx: Context | None = None,
) -> NuggetizeResult:
    """Nugget evaluation of answers (AutoNuggetizer, TREC 2024 RAG): create, score and assign nuggets.

    Per query, nuggets (atomic facts, at most max_nuggets) are created from the passages in windows
    of 10 (only passages with UMBRELA grade >= min_judgment when `scores` is given), labelled vital
    or okay in batches of 10, stored (nuggets_path) and reused; every answer (several runs per query)
    gets support / partial_support / not_support per nugget in batches of 10. Scores per answer:
    all, vital, weighted and their strict variants; the aggregate per run is the mean over answers
    with status ok, with counts of the rest. Failed batches are counted, never dropped; the tool fails,
    writing nothing, when every batch failed or more than max_failed_fraction of them. prompt_file
    {nugget_create_v1: file, ...}: your own version of a prompt.
    """
    options: dict[str, Any] = {"query": query, "passages": passages, "answers": answers, "scores": scores}
    return await run_nuggetize(
        **options,
        query_id=query_id,
        nuggets_path=nuggets_path,
        queries_path=queries_path,
        run_path=run_path,
        corpus_path=corpus_path,
        answers_path=answers_path,
        depth=depth,
        min_judgment=min_judgment,
        max_nuggets=max_nuggets,
        nugget_top_k=nugget_top_k,
        judge_llm=judge_llm,
        judge_cache=judge_cache,
        save_path=save_path,
        max_failed_fraction=max_failed_fraction,
        prompt_file=prompt_file,
        language=language,
        progress=reporter(ctx, "steps (each query's nuggets, then each answer per member and sample)"),
    )


TOOLS = [nuggetize]
