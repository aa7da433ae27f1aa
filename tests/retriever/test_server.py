"""The retriever server in-process over MCP: settings defaults, index then search, dense through the stub."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from servers.retriever import server
from servers.retriever.dense import dense_options, embed
from tests.retriever.conftest import TINY
from tests.support.openai_stub import OpenAIStub, embed_text

pytestmark = pytest.mark.anyio


async def test_init_index_search_over_mcp(tiny_corpus: Path, tmp_path: Path) -> None:
    settings = {"corpus_path": str(tiny_corpus), "index_path": str(tmp_path / "idx")}
    async with Client(server.SPEC.create_app()) as client:
        init = await client.call_tool("retriever_init", settings)
        assert init.structured_content["retriever_info"]["passages"] == 4
        assert init.structured_content["retriever_info"]["index_status"] == "needs building (no index yet)"
        built = await client.call_tool("retriever_index", settings)
        assert built.structured_content["index_info"]["status"] == "built"
        again = await client.call_tool("retriever_init", settings)
        assert again.structured_content["retriever_info"]["index_status"] == "current"
        found = await client.call_tool(
            "retriever_search",
            {"q_ls": ["barking dog", "zzz"], "index_path": str(tmp_path / "idx"), "save_path": str(tmp_path)},
        )
        assert not found.is_error
        assert found.structured_content["ret_ids"][0][0] == "d2"
        assert found.structured_content["ret_ids"][1] == []
        missing = await client.call_tool("retriever_search", {"q_ls": ["x"], "index_path": str(tmp_path / "no")})
        assert missing.is_error and "retriever_index" in missing.content[0].text
        bad = await client.call_tool("retriever_index", {**settings, "bm25": {"method": "nope"}})
        assert bad.is_error and "bm25.method" in bad.content[0].text


async def test_dense_index_and_search_through_an_embeddings_endpoint(tiny_corpus: Path, tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        dense = {"provider": "openai", "model_id": "stub-embed", "base_url": stub.base_url, "batch_size": 3}
        settings = {
            "backend": "dense",
            "corpus_path": str(tiny_corpus),
            "index_path": str(tmp_path / "idx"),
            "dense": dense,
        }
        async with Client(server.SPEC.create_app()) as client:
            embedded = await client.call_tool("retriever_embed", settings)
            assert embedded.structured_content["embed_info"]["status"] == "built"
            reused = await client.call_tool("retriever_index", settings)
            assert reused.structured_content["index_info"]["status"] == "reused"
            query = f"{TINY[2]['title']}\n{TINY[2]['text']}"  # the stub embeds equal texts equally
            found = await client.call_tool(
                "retriever_search",
                {
                    "q_ls": [query],
                    "backend": "dense",
                    "dense": dense,
                    "top_k": 4,
                    "index_path": str(tmp_path / "idx"),
                    "save_path": str(tmp_path),
                },
            )
        assert found.structured_content["ret_ids"][0][0] == "d3"
        assert found.structured_content["ret_scores"][0][0] == pytest.approx(1.0, abs=1e-6)
        expected = sorted(
            (
                sum(a * b for a, b in zip(embed_text(query), embed_text(f"{r['title']}\n{r['text']}"), strict=True)),
                r["id"],
            )
            for r in TINY
        )[::-1]
        assert found.structured_content["ret_ids"][0] == [doc for _, doc in expected]


async def test_embed_normalises_vectors(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        options = dense_options({"provider": "openai", "model_id": "m", "base_url": stub.base_url, "batch_size": 2})
        vectors = await embed(["a", "b", "c"], options)
    assert vectors.shape == (3, 8)
    assert [round(float((v * v).sum()), 6) for v in vectors] == [1.0, 1.0, 1.0]
