"""The python kind: a function of the user's, sync or async, imported only from the read roots."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.target.conftest import ask, failing, records
from ultra_kit.inprocess import ToolFailure

CODE = """
import asyncio
SEEN = []

def answer(request):
    SEEN.append(request)
    if request["question"] == "boom":
        raise RuntimeError("the index is down")
    if request["question"] == "text":
        return "just text"
    return {"answer": "A:" + request["question"], "contexts": ["plain", {"text": "t", "id": "d7", "score": 0.5}],
            "citations": [1], "usage": {"completion_tokens": 2}}

async def answer_async(request):
    await asyncio.sleep(0)
    return "async " + request["question"] + " " + str(len(request["history"]))
"""


@pytest.fixture
def module(tmp_path):
    (tmp_path / "my_rag.py").write_text(CODE)
    return tmp_path / "my_rag.py"


def test_a_file_function_sync_and_its_reply_shapes(tmp_path, module):
    target = {"kind": "python", "function": f"{module}:answer", "max_failed_fraction": 0.5}
    result = ask(tmp_path, ["q", "text", "boom"], target, id_ls=["a", "b", "c"])
    assert result["pred_ls"] == ["A:q", "just text", None]
    assert result["ret_psg"] == [["plain", "t"], [], []] and result["ret_ids"] == [["", "d7"], [], []]
    rows = records(result)
    assert rows[0]["citations"] == [1] and rows[0]["usage"] == {"completion_tokens": 2}
    assert rows[2]["reason"] == "target_error" and "the index is down" in rows[2]["detail"]
    assert Path(result["run_path"]).read_text() == "a Q0 d7 1 1 target\n"


def test_an_async_function_gets_the_history_of_its_conversation(tmp_path, module):
    target = {"kind": "python", "function": f"{module}:answer_async"}
    result = ask(tmp_path, ["first", "second", "third"], target, id_ls=["c<::>1", "c<::>2", "c<::>3"])
    assert result["pred_ls"] == ["async first 0", "async second 2", "async third 4"]


def test_a_module_on_the_project_folder(tmp_path):
    target = {"kind": "python", "function": "examples.targets.rag:answer"}
    result = ask(tmp_path, ["Can I visit the law library?"], target)
    assert result["ret_ids"][0][0] == "0027bff8d2a891ff-41576-43247"


@pytest.mark.parametrize("function", ["os:system", "json:dumps", "pytest:main"])
def test_code_outside_the_read_roots_is_refused_unrun(tmp_path, function):
    with pytest.raises(ToolFailure, match="no module .* in the folders a target may be imported from"):
        ask(tmp_path, ["q"], {"kind": "python", "function": function})


def test_a_file_outside_the_read_roots_is_refused(tmp_path, monkeypatch, module):
    monkeypatch.setenv("ULTRA_READ_ROOTS", "")
    with pytest.raises(ToolFailure, match="outside the folders tools may read"):
        ask(tmp_path, ["q"], {"kind": "python", "function": f"{module}:answer"}, save_path=str(tmp_path / "t"))


def test_a_function_that_always_fails_fails_the_step(tmp_path, module):
    message, rows = failing(tmp_path, ["boom", "boom"], {"kind": "python", "function": f"{module}:answer"})
    assert "2 of 2 items failed" in message and "target_error 2" in message
    assert [r["reason"] for r in rows] == ["target_error", "target_error"]
