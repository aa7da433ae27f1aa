"""generate_queries reports its progress over MCP: a real MCP client with a progress callback receives one update
per generation (a grounded question with its self-check, or one list of requests), the total growing when a round
replaces discarded questions, ending at done = total."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from servers.synth.server import SPEC
from tests.support.openai_stub import OpenAIStub
from tests.synth.conftest import scripted, small_corpus, synth_settings

pytestmark = pytest.mark.anyio


async def test_generate_queries_reports_each_generation(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_OUTPUT", "1")
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    corpus = small_corpus(tmp_path / "corpus.jsonl")
    n = {"grounded": 3, "off_topic": 2, "jailbreak": 2}
    with OpenAIStub(scripted()) as stub:
        settings = synth_settings(stub.base_url, tmp_path, corpus_path=str(corpus), n_per_kind=n)
        async with Client(SPEC.create_app()) as client:
            result = await client.call_tool("generate_queries", settings, progress_callback=on_progress)
    assert not result.is_error, result.content
    counts = result.structured_content["synth_counts"]
    discarded = counts["discarded"].get("self_check", 0)
    # 4 off-topic lists (one per category), 3 prompted techniques, 3 grounded + 2 injected-passage hosts, and one
    # more grounded question per one the self-check discarded
    generations = 4 + 3 + 5 + discarded
    assert updates[0] == (0, None, "generating queries")
    assert [u[0] for u in updates[1:]] == list(range(1, generations + 1))
    assert updates[-1][1:] == (generations, f"generated {generations}/{generations} (questions, lists)")
    assert all(done <= total for done, total, _ in updates[1:])
