"""The langchain kind over real langchain-core objects: fake models and embeddings it ships, no network."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from servers.target.kinds import langchain as kind  # noqa: E402
from servers.target.kinds.base import KindContext, TargetCallError, TurnRequest  # noqa: E402
from ultra_base.errors import InputError  # noqa: E402

CHAIN = """
from operator import itemgetter

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListChatModel, FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

SEEN = []
store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
store.add_documents([
    Document(page_content="Paris is the capital of France.", metadata={"doc_id": "d1", "score": 0.9}),
    Document(page_content="Berlin is the capital of Germany.", metadata={"doc_id": "d2"}),
    Document(page_content="Rome is the capital of Italy.", id="own-3"),
])
retriever = store.as_retriever(search_kwargs={"k": 3})
prompt = ChatPromptTemplate.from_messages(
    [MessagesPlaceholder("chat_history"), ("human", "{context}\\n\\nQuestion: {question}")]
)

def _record(prompt_value):
    SEEN.append(prompt_value.to_messages())
    return prompt_value

chain = RunnablePassthrough.assign(context=itemgetter("question") | retriever).assign(
    answer=prompt | RunnableLambda(_record) | FakeListChatModel(responses=["Paris."]) | StrOutputParser()
)
plain = FakeListLLM(responses=["a plain answer"])

def _top_k(inputs, config):
    return {"answer": f"top_k={config['configurable'].get('top_k')}", "docs": []}

configured = RunnableLambda(_top_k)

def _sync_only(inputs):
    return {"answer": inputs["q"].upper(), "docs": ["a bare string passage"]}

sync_only = RunnableLambda(_sync_only)

def _broken(inputs):
    raise RuntimeError("the vector store is down")

broken = RunnableLambda(_broken)
not_runnable = 3
"""


@pytest.fixture(scope="module")
def chains(tmp_path_factory: pytest.TempPathFactory) -> KindContext:
    tmp_path = tmp_path_factory.mktemp("langchain_target")  # one folder: the module is imported once
    (tmp_path / "lc_chains.py").write_text(textwrap.dedent(CHAIN), encoding="utf-8")
    return KindContext(read_roots=(tmp_path,), timeout=10.0, max_response_bytes=1 << 20, max_json_depth=32)


def _asker(context: KindContext, name: str, **keys: str | None):
    return kind.open_asker({"kind": "langchain", "runnable": f"lc_chains:{name}", **keys}, context)


@pytest.mark.anyio
async def test_a_retrieval_chain_gives_its_answer_documents_ids_and_sees_the_history(chains: KindContext) -> None:
    asker = _asker(chains, "chain", input_key="question", answer_key="answer", context_key="context")
    history = ({"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"})
    reply = await asker.ask(TurnRequest(question="capital of France?", id="q1", history=history))
    await asker.aclose()
    assert reply.answer == "Paris."
    by_id = {p.id: p for p in reply.contexts}
    assert set(by_id) == {"d1", "d2", "own-3"}  # metadata ids first, the Document's own id otherwise
    assert by_id["d1"].text == "Paris is the capital of France." and by_id["d1"].score == 0.9
    assert by_id["own-3"].text == "Rome is the capital of Italy." and by_id["own-3"].score is None
    import lc_chains

    messages = lc_chains.SEEN[-1]
    assert [(m.type, m.content) for m in messages[:2]] == [("human", "Hi"), ("ai", "Hello!")]
    assert messages[2].content.endswith("Question: capital of France?")


@pytest.mark.anyio
async def test_a_bare_runnable_takes_the_question_and_its_output_is_the_answer(chains: KindContext) -> None:
    asker = _asker(chains, "plain", input_key="", answer_key="", context_key="")
    reply = await asker.ask(TurnRequest(question="anything", id="q1"))
    assert reply.answer == "a plain answer" and reply.contexts == ()


@pytest.mark.anyio
async def test_the_target_settings_reach_the_runnable_as_configurable(chains: KindContext) -> None:
    asker = _asker(chains, "configured", input_key="q", answer_key="answer", context_key="docs")
    reply = await asker.ask(TurnRequest(question="x", id="q1", settings={"top_k": 7}))
    assert reply.answer == "top_k=7"


@pytest.mark.anyio
async def test_a_sync_only_runnable_is_invoked_and_string_passages_are_kept(chains: KindContext) -> None:
    asker = _asker(chains, "sync_only", input_key="q", answer_key="answer", context_key="docs")
    reply = await asker.ask(TurnRequest(question="shout", id="q1"))
    assert reply.answer == "SHOUT"
    assert [(p.text, p.id) for p in reply.contexts] == [("a bare string passage", None)]


@pytest.mark.anyio
async def test_the_chain_raising_is_a_target_error_with_its_message(chains: KindContext) -> None:
    asker = _asker(chains, "broken", input_key="q", answer_key="answer")
    with pytest.raises(TargetCallError) as error:
        await asker.ask(TurnRequest(question="x", id="q1"))
    assert error.value.reason == "target_error"
    assert error.value.detail == "RuntimeError: the vector store is down"


@pytest.mark.anyio
async def test_an_answer_key_the_output_lacks_is_a_missing_answer_naming_the_keys(chains: KindContext) -> None:
    asker = _asker(chains, "configured", input_key="q", answer_key="result")
    with pytest.raises(TargetCallError) as error:
        await asker.ask(TurnRequest(question="x", id="q1"))
    assert error.value.reason == "missing_answer"
    assert "output['result']" in error.value.detail and "['answer', 'docs']" in error.value.detail


def test_an_object_that_is_not_a_runnable_is_an_input_error(chains: KindContext) -> None:
    with pytest.raises(InputError, match="is a int, not a LangChain Runnable"):
        _asker(chains, "not_runnable")
    with pytest.raises(InputError, match="target.input_key must be a key name"):
        _asker(chains, "chain", input_key=3)


def test_target_ask_over_a_chain_gives_answers_passages_a_run_and_latency(chains: KindContext, tmp_path) -> None:
    from tests.target.conftest import ask, records

    chain = chains.read_roots[0] / "lc_chains.py"
    target = {"kind": "langchain", "runnable": f"{chain}:chain", "settings": {"top_k": 3}}
    result = ask(tmp_path, ["capital of France?", "and Italy?"], target, id_ls=["c1<::>1", "c1<::>2"])
    assert result["pred_ls"] == ["Paris.", "Paris."]  # FakeListChatModel cycles its one response
    assert {frozenset(ids) for ids in result["ret_ids"]} == {frozenset({"d1", "d2", "own-3"})}
    run_lines = Path(result["run_path"]).read_text().splitlines()
    ids_by_item = zip(["c1<::>1", "c1<::>2"], result["ret_ids"], strict=True)
    expected = [
        f"{qid} Q0 {doc} {rank} {4 - rank} target" for qid, ids in ids_by_item for rank, doc in enumerate(ids, 1)
    ]
    assert run_lines == expected
    second = records(result)[1]
    assert second["history_turns"] == 2 and second["status"] == "ok" and second["latency"] > 0
    assert set(result["latency"]) >= {"p50", "p95", "max"} and result["latency"]["count"] == 2
