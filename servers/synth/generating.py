"""What ``generate_queries`` does (the tool face is ``tools/queries.py``): check the plan, ask the LLM for
grounded, off-topic and jailbreak questions, keep those in the language asked for, drop near-duplicates,
and write the dataset folder (queries, qrels, corpus copy, counts)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from servers.synth.dataset import CORPUS_FILE, COUNTS_FILE, DATASET_FILE, QRELS_FILE, dataset_folder
from ultra_base.errors import InputError
from ultra_kit import failures
from ultra_kit.failures import FailedSummary
from ultra_kit.languages import check_language
from ultra_kit.limits.caps import capped

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


class SynthCounts(TypedDict):
    generated: dict[str, dict[str, int]]
    total: int
    discarded: dict[str, int]
    requests: int
    errors: list[str]
    failed: FailedSummary


class GenerateResult(TypedDict):
    dataset_path: str
    qrels_path: str
    synth_corpus_path: str
    synth_counts: SynthCounts
    synth_usage: dict[str, Any]


async def run_generate_queries(
    *,
    synth_llm: dict[str, Any],
    synth_cache: str,
    corpus_path: str,
    domain_description: str,
    n_per_kind: dict[str, int],
    categories: dict[str, str],
    techniques: list[str],
    seed: int,
    dedup_threshold: float,
    dataset_dir: str,
    language: str,
    language_min_confidence: float,
    max_failed_fraction: float,
    ctx: Context | None,
) -> GenerateResult:
    """``generate_queries``'s work, its settings as the tool received them (see the tool's description)."""
    from servers.synth import corpus, queries
    from ultra_kit.files import atomic_write_json, atomic_write_jsonl, atomic_write_text
    from ultra_kit.llm_mapping import settings_for
    from ultra_llm.cache import open_cache
    from ultra_llm.client import LLMClient

    started = time.perf_counter()
    unknown = sorted(set(n_per_kind) - set(queries.KINDS))
    if unknown or any(not isinstance(v, int) or v < 0 for v in n_per_kind.values()):
        raise InputError(f"n_per_kind maps {list(queries.KINDS)} to counts >= 0; got {n_per_kind}")
    for kind, number in n_per_kind.items():
        capped(number, f"n_per_kind.{kind}", server="synth", name="n_per_kind")
    bad = [t for t in techniques if t not in queries.TECHNIQUES]
    if bad:
        raise InputError(f"unknown jailbreak techniques {bad}; known: {list(queries.TECHNIQUES)}")
    if len(set(techniques)) < len(techniques):  # each named once more would be one more request
        raise InputError(f"techniques names a technique more than once: {techniques}")
    capped(len(categories), "categories (off-topic categories)", server="synth", name="categories")
    if not domain_description.strip():
        raise InputError("domain_description is empty: say what the assistant under test is for")
    failures.check_fraction(max_failed_fraction)
    language = check_language(language)
    folder = dataset_folder(dataset_dir)
    records, documents = corpus.read_corpus(corpus_path)
    settings = settings_for(synth_llm, server="synth", setting="synth_llm")
    language = queries.corpus_language(language, documents, seed)
    plan = queries.Plan(domain_description.strip(), dict(n_per_kind), dict(categories), list(techniques), seed,
                        settings.max_retries, language)  # fmt: skip
    progress = None
    if ctx is not None:
        await ctx.report_progress(0, None, "generating queries")

        async def progress(done: int, planned: int) -> None:
            await ctx.report_progress(done, planned, f"generated {done}/{planned} (questions, lists)")

    cache = open_cache(synth_cache)
    try:
        async with LLMClient(settings, cache) as client:
            generated, tally, planted = await queries.generate_queries_with(client, documents, plan, progress)
            usage = client.usage.as_dict()
    finally:
        cache.close()
    failed, ok = failures.summarise(tally.outcomes)
    failures.check(failed, ok, tool="generate_queries", noun="generations", max_failed_fraction=max_failed_fraction)
    generated, wrong_language = queries.in_language(generated, language, language_min_confidence)
    kept, duplicates = queries.deduplicate(generated, dedup_threshold)
    rows = queries.with_ids(kept)
    if not rows:
        raise InputError(f"no query was generated; first errors: {tally.errors or ['none: every count is 0']}")
    folder.mkdir(parents=True, exist_ok=True)
    dataset = atomic_write_jsonl(folder / DATASET_FILE, rows)
    qrels = "".join(f"{r['id']} 0 {r['source_docid']} 1\n" for r in rows if r["source_docid"])
    qrels_path = atomic_write_text(folder / QRELS_FILE, qrels)
    corpus_out = atomic_write_jsonl(folder / CORPUS_FILE, corpus.corpus_copy(records, documents, planted))
    discarded = dict(tally.discarded) | {"duplicate": duplicates, "wrong_language": wrong_language}
    counts: SynthCounts = {
        "generated": queries.counts_of(rows),
        "total": len(rows),
        "discarded": discarded,
        "requests": tally.requests,
        "errors": tally.errors,
        "failed": failed,
    }
    seconds = round(time.perf_counter() - started, 3)
    atomic_write_json(
        folder / COUNTS_FILE,
        {**counts, "language": language, "usage": usage, "seconds": seconds, "planted": sorted(planted)},
    )
    return {
        "dataset_path": str(dataset.resolve()),
        "qrels_path": str(qrels_path.resolve()),
        "synth_corpus_path": str(corpus_out.resolve()),
        "synth_counts": counts,
        "synth_usage": usage,
    }
