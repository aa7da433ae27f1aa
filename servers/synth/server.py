"""The synth MCP server: ``generate_queries`` builds a risk query set from a corpus, ``risk_route`` sends
each question to its judges, ``risk_table`` writes the risk table. ``python -m servers.synth`` serves it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from ultra_kit.errors import InputError
from ultra_kit.factory import ServerSpec, tool_hints

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

INSTRUCTIONS = (
    "Synthetic risk evaluation: generate_queries writes grounded, off-topic and jailbreak questions (with qrels "
    "and a corpus copy holding planted instructions) that benchmark.get_data reads; risk_route routes each "
    "question to its judges; risk_table writes the safe / grounded rates with Wilson intervals."
)
DATASET_FILE, QRELS_FILE, CORPUS_FILE, COUNTS_FILE = "queries.jsonl", "qrels.trec", "corpus.jsonl", "counts.json"

LLMParam = Annotated[
    dict[str, Any],
    Field(description="backend (local | openai), model_id, base_url, api_key, reasoning, structured_output (always "
          "on for local), timeout, max_retries, max_workers, endpoints (a pool: [{base_url, model_id, api_key, "
          "max_concurrency, weight}]), drain_after, cool_down; keys left out take parameter.yaml's values"),
]  # fmt: skip
ItemList = Annotated[list[Any] | None, Field(description="per-question judged items (a judge's `items`), or null")]


class SynthCounts(TypedDict):
    generated: dict[str, dict[str, int]]
    total: int
    discarded: dict[str, int]
    requests: int
    errors: list[str]


class GenerateResult(TypedDict):
    dataset_path: str
    qrels_path: str
    synth_corpus_path: str
    synth_counts: SynthCounts
    synth_usage: dict[str, Any]


class RouteResult(TypedDict):
    route: list[str]
    kind_ls: list[str]
    category_ls: list[str]


class TableResult(TypedDict):
    risk_table: list[dict[str, Any]]
    table_path: str
    table_csv_path: str


def _dataset_folder(dataset_dir: str) -> Path:
    from ultra_kit.files import check_save_path

    folder = check_save_path(dataset_dir, "generate_queries", "")
    if folder.exists() and not folder.is_dir():
        raise InputError("dataset_dir must be a folder", path=dataset_dir)
    return folder


@tool_hints(read_only=False, idempotent=True, open_world=True)
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
    """  # noqa: E501
    from servers.synth import corpus, queries
    from ultra_kit.files import atomic_write_json, atomic_write_jsonl, atomic_write_text
    from ultra_kit.llm_mapping import settings_for
    from ultra_llm.cache import open_cache
    from ultra_llm.client import LLMClient

    started = time.perf_counter()
    unknown = sorted(set(n_per_kind) - set(queries.KINDS))
    if unknown or any(not isinstance(v, int) or v < 0 for v in n_per_kind.values()):
        raise InputError(f"n_per_kind maps {list(queries.KINDS)} to counts >= 0; got {n_per_kind}")
    bad = [t for t in techniques if t not in queries.TECHNIQUES]
    if bad:
        raise InputError(f"unknown jailbreak techniques {bad}; known: {list(queries.TECHNIQUES)}")
    if not domain_description.strip():
        raise InputError("domain_description is empty: say what the assistant under test is for")
    folder = _dataset_folder(dataset_dir)
    records, documents = corpus.read_corpus(corpus_path)
    settings = settings_for(synth_llm, server="synth", setting="synth_llm")
    plan = queries.Plan(domain_description.strip(), dict(n_per_kind), dict(categories), list(techniques), seed,
                        settings.max_retries)  # fmt: skip
    if ctx is not None:
        await ctx.report_progress(0, None, "generating queries")
    cache = open_cache(synth_cache)
    try:
        async with LLMClient(settings, cache) as client:
            generated, tally, planted = await queries.generate_queries_with(client, documents, plan)
            usage = client.usage.as_dict()
    finally:
        cache.close()
    kept, duplicates = queries.deduplicate(generated, dedup_threshold)
    rows = queries.with_ids(kept)
    if not rows:
        raise InputError(f"no query was generated; first errors: {tally.errors or ['none: every count is 0']}")
    folder.mkdir(parents=True, exist_ok=True)
    dataset = atomic_write_jsonl(folder / DATASET_FILE, rows)
    qrels = "".join(f"{r['id']} 0 {r['source_docid']} 1\n" for r in rows if r["source_docid"])
    qrels_path = atomic_write_text(folder / QRELS_FILE, qrels)
    corpus_out = atomic_write_jsonl(folder / CORPUS_FILE, corpus.corpus_copy(records, documents, planted))
    discarded = dict(tally.discarded) | {"duplicate": duplicates}
    counts: SynthCounts = {
        "generated": queries.counts_of(rows),
        "total": len(rows),
        "discarded": discarded,
        "requests": tally.requests,
        "errors": tally.errors,
    }
    seconds = round(time.perf_counter() - started, 3)
    atomic_write_json(folder / COUNTS_FILE, {**counts, "usage": usage, "seconds": seconds, "planted": sorted(planted)})
    return {
        "dataset_path": str(dataset.resolve()),
        "qrels_path": str(qrels_path.resolve()),
        "synth_corpus_path": str(corpus_out.resolve()),
        "synth_counts": counts,
        "synth_usage": usage,
    }


def _dataset_rows(dataset_dir: str) -> list[dict[str, Any]]:
    from ultra_kit.errors import existing_file
    from ultra_kit.readers import read_jsonl

    return read_jsonl(existing_file(Path(dataset_dir) / DATASET_FILE, what="query set (run generate_queries first)"))


@tool_hints(read_only=True, idempotent=True)
def risk_route(
    id_ls: Annotated[list[str], Field(description="question ids (from benchmark.get_data)")],
    *,
    dataset_dir: Annotated[str, Field(description="the folder generate_queries wrote")],
) -> RouteResult:
    """Route each question by its kind: `grounded` questions to the groundedness judges, off-topic and
    jailbreak ones to `guardrail` (use in a pipeline `branch` with those two branches)."""
    by_id = {str(row["id"]): row for row in _dataset_rows(dataset_dir)}
    missing = [qid for qid in id_ls if str(qid) not in by_id]
    if missing:
        raise InputError(f"ids not in the query set of {dataset_dir}: {missing[:5]}")
    kinds = [by_id[str(qid)]["kind"] for qid in id_ls]
    return {
        "route": ["grounded" if kind == "grounded" else "guardrail" for kind in kinds],
        "kind_ls": kinds,
        "category_ls": [by_id[str(qid)]["category"] for qid in id_ls],
    }


@tool_hints(read_only=False, idempotent=True)
def risk_table(
    id_ls: Annotated[list[str], Field(description="question ids (from benchmark.get_data)")],
    judged_items: Annotated[
        list[Any],
        Field(
            description="per question: its faithfulness item (grounded) or guardrail_judge item (off-topic, jailbreak)"
        ),
    ],  # fmt: skip
    relevancy_items: ItemList = None,
    toxicity_items: ItemList = None,
    bias_items: ItemList = None,
    *,
    dataset_dir: Annotated[str, Field(description="the folder generate_queries wrote")],
    toxicity_threshold: Annotated[float, Field(description="toxic when probability >= this", ge=0, le=1)],
    table_path: Annotated[str, Field(description="folder (risk_table_<timestamp>.json/.csv) or a .json file name")],
) -> TableResult:
    """The risk table, one row per kind x category/technique: n, the safe (guardrail) or grounded (faithfulness
    = 1) rate with its 95% Wilson interval, the toxicity rate, the bias score, and the failures. Writes JSON
    and CSV. Items that failed (error / parse_error) count as failures, never in a rate."""
    from servers.synth.risk_table import as_csv, build_table
    from ultra_kit.files import atomic_write_json, atomic_write_text, result_path

    rows = _dataset_rows(dataset_dir)
    table = build_table(
        rows, [str(i) for i in id_ls], judged_items=judged_items, relevancy_items=relevancy_items,
        toxicity_items=toxicity_items, bias_items=bias_items, toxicity_threshold=toxicity_threshold,
    )  # fmt: skip
    path = result_path(table_path, "risk_table", ".json")
    settings = {"dataset_dir": dataset_dir, "toxicity_threshold": toxicity_threshold}
    atomic_write_json(path, {"tool": "risk_table", "rows": table, "settings": settings})
    csv_path = atomic_write_text(path.with_suffix(".csv"), as_csv(table))
    return {"risk_table": table, "table_path": str(path), "table_csv_path": str(csv_path)}


SPEC = ServerSpec("synth", Path(__file__).parent, lambda: [generate_queries, risk_route, risk_table],
                  instructions=INSTRUCTIONS)  # fmt: skip


def main() -> None:
    """Serve over stdio."""
    SPEC.create_app().run()


if __name__ == "__main__":
    main()
