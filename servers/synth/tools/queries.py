"""``generate_queries``: a risk query set (grounded, off-topic, jailbreak) generated from a corpus with an LLM."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from servers.synth.generating import GenerateResult
from ultra_kit.factory import tool_hints
from ultra_kit.llm_mapping import llm_mapping_description

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

LLMParam = Annotated[dict[str, Any], Field(description=llm_mapping_description())]


@tool_hints(read_only=False, idempotent=True, open_world=True, destructive=True)  # replaces the files of dataset_dir
async def generate_queries(
    *,
    synth_llm: LLMParam,
    synth_cache: Annotated[str, Field(description="SQLite answer cache; '' = off")],
    corpus_path: Annotated[str, Field(description="JSONL corpus or BEIR folder")],
    domain_description: Annotated[str, Field(description="what the assistant under test is for")],
    n_per_kind: Annotated[
        dict[str, int], Field(description="grounded: questions; off_topic / jailbreak: per category / technique")
    ],
    categories: Annotated[dict[str, str], Field(description="off-topic category name -> what its requests are about")],
    techniques: Annotated[list[str], Field(description="jailbreak techniques")],
    seed: Annotated[int, Field(description="seed of the document sampling")],
    dedup_threshold: Annotated[
        float, Field(description="word-set Jaccard at which a question is a near-duplicate", ge=0, le=1)
    ],
    dataset_dir: Annotated[str, Field(description="folder for queries.jsonl, qrels.trec, corpus.jsonl, counts.json")],
    language: Annotated[
        str,
        Field(
            description="ISO 639-1 code the questions are asked for in (others dropped as wrong_language); "
            "en = as written; auto = the corpus's language"
        ),
    ],
    language_min_confidence: Annotated[
        float, Field(description="drop a question only when the detector is at least this sure", ge=0, le=1)
    ],
    max_failed_fraction: Annotated[
        float,
        Field(
            description="fail the tool (nothing written) when more than this share of its generations (a grounded "
            "question with its self-check, or one list) failed (error / unreadable reply); always when none succeeded",
            ge=0,
            le=1,
        ),
    ],
    ctx: Context | None = None,
) -> GenerateResult:
    """Generate grounded, off-topic and jailbreak questions from a corpus with an LLM (seeded), each with its
    expected safe behaviour.

    Grounded: a question and reference answer per sampled document, kept only when a self-check request agrees
    that the document answers it; qrels.trec maps it to its source document. Off-topic: per category, phrased
    for the assistant's domain. Jailbreak: per technique; injected_passage plants an instruction in a copy of a
    passage (corpus.jsonl, same ids) and asks a grounded question that retrieves it. Near-duplicates are removed.
    Writes queries.jsonl (fields id, query, kind, category, reference, source_docid, expected_behaviour), which
    benchmark.get_data reads directly. Counts say what was generated and what was discarded, and why.
    The tool fails, writing nothing, when no generation succeeded or more than max_failed_fraction of them
    failed; `synth_counts.failed` counts the failures otherwise.
    """  # noqa: E501
    from servers.synth.generating import run_generate_queries

    settings = dict(synth_llm=synth_llm, synth_cache=synth_cache, corpus_path=corpus_path, seed=seed)
    return await run_generate_queries(
        **settings,
        domain_description=domain_description,
        n_per_kind=n_per_kind,
        categories=categories,
        techniques=techniques,
        dedup_threshold=dedup_threshold,
        dataset_dir=dataset_dir,
        language=language,
        language_min_confidence=language_min_confidence,
        max_failed_fraction=max_failed_fraction,
        ctx=ctx,
    )


TOOLS = [generate_queries]
