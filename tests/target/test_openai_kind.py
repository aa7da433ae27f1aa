"""The openai kind: a chat endpoint that is the RAG system, its passages read from a response field."""

from __future__ import annotations

from tests.target.conftest import ask, records


def test_a_chat_endpoint_with_citations_and_history(tmp_path, service):
    target = {"kind": "openai", "base_url": f"{service.url}/v1", "model_id": "rag-bot", "api_key": "sk-local",
              "system": "Answer from the documents.", "contexts": "choices[0].message.context.citations",
              "context_text": "content", "context_id": "id", "settings": {"temperature": 0}}  # fmt: skip
    result = ask(tmp_path, ["first?", "second?"], target, id_ls=["c<::>1", "c<::>2"])
    assert result["pred_ls"] == ["chat:first?", "chat:second?"]
    assert result["ret_psg"][1] == ["cited for second?", "second"] and result["ret_ids"][1] == ["c1", "c2"]
    assert records(result)[0]["usage"] == {"prompt_tokens": 11, "completion_tokens": 2}
    second = service.seen[-1]
    assert second["headers"]["Authorization"] == "Bearer sk-local"
    assert second["body"] == {
        "model": "rag-bot", "temperature": 0,
        "messages": [{"role": "system", "content": "Answer from the documents."},
                     {"role": "user", "content": "first?"}, {"role": "assistant", "content": "chat:first?"},
                     {"role": "user", "content": "second?"}],
    }  # fmt: skip
