"""The llamaindex kind over real llama-index-core objects: MockLLM, MockEmbedding, a VectorStoreIndex; no network."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from servers.target.kinds import llamaindex as kind  # noqa: E402
from servers.target.kinds.base import KindContext, TargetCallError, TurnRequest  # noqa: E402
from ultra_base.errors import InputError  # noqa: E402

ENGINES = """
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM

PROMPTS = []

class RecordingLLM(MockLLM):
    def complete(self, prompt, formatted=False, **kwargs):
        PROMPTS.append(prompt)
        return super().complete(prompt, formatted=formatted, **kwargs)

llm = RecordingLLM(max_tokens=4)
index = VectorStoreIndex.from_documents(
    [
        Document(text="Paris is the capital of France.", doc_id="d1"),
        Document(text="Berlin is the capital of Germany.", doc_id="d2", metadata={"docid": "meta-2"}),
    ],
    embed_model=MockEmbedding(embed_dim=8),
)
query_engine = index.as_query_engine(llm=llm, similarity_top_k=2)
chat_engine = index.as_chat_engine(chat_mode="context", llm=llm, similarity_top_k=2)

from llama_index.core.chat_engine import CondenseQuestionChatEngine

condensing = CondenseQuestionChatEngine.from_defaults(query_engine=query_engine, llm=llm)

class Broken:
    async def aquery(self, question):
        raise ConnectionError("index server unreachable")

broken = Broken()
retriever = index.as_retriever()
"""


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> KindContext:
    tmp_path = tmp_path_factory.mktemp("llamaindex_target")
    (tmp_path / "li_engines.py").write_text(textwrap.dedent(ENGINES), encoding="utf-8")
    return KindContext(read_roots=(tmp_path,), timeout=10.0, max_response_bytes=1 << 20, max_json_depth=32)


def _asker(context: KindContext, name: str):
    return kind.open_asker({"kind": "llamaindex", "engine": f"li_engines:{name}"}, context)


@pytest.mark.anyio
async def test_a_query_engine_gives_its_answer_and_source_nodes_with_ids_and_scores(engines: KindContext) -> None:
    asker = _asker(engines, "query_engine")
    assert isinstance(asker, kind.QueryEngineAsker)
    reply = await asker.ask(TurnRequest(question="capital of France?", id="q1"))
    await asker.aclose()
    assert reply.answer == "text text text text"  # MockLLM(max_tokens=4)
    by_id = {p.id: p for p in reply.contexts}
    assert set(by_id) == {"d1", "meta-2"}  # the document's id, or a metadata id when it has one
    assert by_id["d1"].text == "Paris is the capital of France."
    assert by_id["meta-2"].text == "Berlin is the capital of Germany."
    assert all(isinstance(p.score, float) for p in reply.contexts)
    import li_engines

    assert "Paris is the capital of France." in li_engines.PROMPTS[-1]


@pytest.mark.anyio
async def test_a_chat_engine_gets_the_conversation_history(engines: KindContext) -> None:
    asker = _asker(engines, "chat_engine")
    assert isinstance(asker, kind.ChatEngineAsker)
    history = ({"role": "user", "content": "Tell me about Europe."}, {"role": "assistant", "content": "Gladly, ask."})
    reply = await asker.ask(TurnRequest(question="And its capitals?", id="c1-2", history=history))
    assert reply.answer == "text text text text"
    assert {p.id for p in reply.contexts} == {"d1", "meta-2"}
    import li_engines

    prompt = li_engines.PROMPTS[-1]
    order = [prompt.index(text) for text in ("Tell me about Europe.", "Gladly, ask.", "And its capitals?")]
    assert order == sorted(order)


@pytest.mark.anyio
async def test_a_query_engine_gets_no_history_and_says_so_once(engines: KindContext, capsys) -> None:
    asker = _asker(engines, "query_engine")
    history = ({"role": "user", "content": "Tell me about Europe."}, {"role": "assistant", "content": "Gladly, ask."})
    for question in ("And its capitals?", "And Germany's?"):
        reply = await asker.ask(TurnRequest(question=question, id="c1-2", history=history))
        assert reply.answer == "text text text text"
        import li_engines

        prompt = li_engines.PROMPTS[-1]
        assert question in prompt and "Tell me about Europe." not in prompt and "Gladly, ask." not in prompt
    assert capsys.readouterr().err.count("target.engine is a query engine") == 1


@pytest.mark.anyio
async def test_a_query_engine_made_a_chat_engine_condenses_the_history_into_the_question(
    engines: KindContext, capsys
) -> None:
    asker = _asker(engines, "condensing")
    assert isinstance(asker, kind.ChatEngineAsker)
    history = ({"role": "user", "content": "Tell me about Europe."}, {"role": "assistant", "content": "Gladly, ask."})
    reply = await asker.ask(TurnRequest(question="And its capitals?", id="c1-2", history=history))
    assert reply.answer == "text text text text" and {p.id for p in reply.contexts} == {"d1", "meta-2"}
    import li_engines

    condense = next(p for p in reversed(li_engines.PROMPTS) if "Tell me about Europe." in p)
    order = [condense.index(text) for text in ("Tell me about Europe.", "Gladly, ask.", "And its capitals?")]
    assert order == sorted(order)  # the history, then the question, in the prompt that rewrites the question
    assert "query engine" not in capsys.readouterr().err


@pytest.mark.anyio
async def test_the_engine_raising_is_a_target_error(engines: KindContext) -> None:
    with pytest.raises(TargetCallError) as error:
        await _asker(engines, "broken").ask(TurnRequest(question="x", id="q1"))
    assert (error.value.reason, error.value.detail) == ("target_error", "ConnectionError: index server unreachable")


def test_an_object_that_is_no_engine_is_an_input_error(engines: KindContext) -> None:
    with pytest.raises(InputError, match="neither a query engine .aquery. nor a chat engine"):
        _asker(engines, "retriever")


def test_target_ask_over_a_query_engine_gives_the_source_ids_as_a_run(engines: KindContext, tmp_path) -> None:
    from tests.target.conftest import ask

    engine = engines.read_roots[0] / "li_engines.py"
    target = {"kind": "llamaindex", "engine": f"{engine}:query_engine"}
    result = ask(tmp_path, ["capital of France?", "capital of Germany?"], target, id_ls=["q1", "q2"])
    assert result["pred_ls"] == ["text text text text"] * 2
    assert [set(ids) for ids in result["ret_ids"]] == [{"d1", "meta-2"}] * 2
    lines = Path(result["run_path"]).read_text().splitlines()
    assert [line.split()[:4] for line in lines] == [
        [qid, "Q0", doc, str(rank)]
        for qid, ids in zip(["q1", "q2"], result["ret_ids"], strict=True)
        for rank, doc in enumerate(ids, 1)
    ]
    assert result["failed"]["count"] == 0 and result["latency"]["count"] == 2
