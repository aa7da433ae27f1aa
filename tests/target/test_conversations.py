"""Conversations asked turn by turn: the history each turn sent, checked on what the service received."""

from __future__ import annotations

import pytest

from tests.target.conftest import ask
from ultra_kit.inprocess import ToolFailure

BODY = {"question": "{{ question }}", "id": "{{ id }}", "history": "{{ history }}"}


def target(service, **more):
    return {"kind": "http", "url": f"{service.url}/ask", "body": BODY, **more}


def received(service) -> dict:
    return {s["body"]["id"]: s["body"]["history"] for s in service.seen}


def test_own_answers_are_the_history_of_the_next_turn(tmp_path, service):
    ids = ["c1<::>2", "c2<::>1", "c1<::>1", "c1<::>3"]  # MT-RAG ids: grouped and ordered by turn
    result = ask(tmp_path, ["second", "other", "first", "third"], target(service, max_workers=4), id_ls=ids)
    assert result["pred_ls"] == ["A:second", "A:other", "A:first", "A:third"]  # results stay per item
    history = received(service)
    assert history["c1<::>1"] == [] and history["c2<::>1"] == []
    assert history["c1<::>3"] == [
        {"role": "user", "content": "first"}, {"role": "assistant", "content": "A:first"},
        {"role": "user", "content": "second"}, {"role": "assistant", "content": "A:second"},
    ]  # fmt: skip


def test_reference_answers_from_gt_ls_grouped_by_conv_ls(tmp_path, service):
    result = ask(tmp_path, ["one", "two"], target(service, history="reference"), id_ls=["a", "b"],
                 conv_ls=["k", "k"], gt_ls=[["gold one", "alias"], "gold two"])  # fmt: skip
    assert result["pred_ls"] == ["A:one", "A:two"]
    assert received(service)["b"] == [{"role": "user", "content": "one"}, {"role": "assistant", "content": "gold one"}]


def test_mtrag_turns_layout(tmp_path, service):
    turns = [{"speaker": "user", "text": "hi"}, {"speaker": "agent", "text": "reference hello"},
             {"speaker": "user", "text": "and then?"}]  # fmt: skip
    ask(tmp_path, [turns[:1], turns], target(service), id_ls=["t<::>1", "t<::>2"])
    assert received(service)["t<::>2"] == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "A:hi"}]
    service.seen.clear()
    ask(tmp_path, [turns[:1], turns], target(service, history="reference"), id_ls=["t<::>1", "t<::>2"])
    assert received(service)["t<::>2"][1] == {"role": "assistant", "content": "reference hello"}


def test_reference_history_without_gt_ls_is_a_clear_error(tmp_path, service):
    with pytest.raises(ToolFailure, match="history is reference but no gt_ls"):
        ask(tmp_path, ["one", "two"], target(service, history="reference"), conv_ls=["k", "k"])
    assert service.seen == []
