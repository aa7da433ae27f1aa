"""``index_path`` is confined to output/ as a ``save_path`` is: a path or a link leading out is refused
with an error naming the setting, before anything is read, created or replaced."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from servers.retriever.server import SPEC
from tests.conftest import run_ultra
from tests.retriever.conftest import TINY, write_corpus
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools
from ultra_kit.paths.output_root import ALLOW_OUTSIDE_ENV

TOOLS = ("retriever_init", "retriever_embed", "retriever_index", "retriever_search")


def call(name: str, **arguments):
    return anyio.run(call_local_tool, local_tools(SPEC)[name], arguments)


def arguments(name: str, corpus: Path, index_path: str) -> dict:
    if name == "retriever_search":
        return {"q_ls": ["cat"], "index_path": index_path, "save_path": "output/runs"}
    return {"corpus_path": str(corpus), "index_path": index_path}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp_path as the working directory (output/ is tmp_path/output), confinement on, a tiny corpus."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ALLOW_OUTSIDE_ENV)
    write_corpus(tmp_path, TINY)
    return tmp_path


@pytest.mark.parametrize("name", TOOLS)
@pytest.mark.parametrize("index_path", ["{tmp}/elsewhere", "output/../elsewhere", "/"])
def test_an_index_path_outside_output_is_refused_by_every_tool(project: Path, name: str, index_path: str) -> None:
    index_path = index_path.format(tmp=project)
    with pytest.raises(ToolFailure) as caught:
        call(name, **arguments(name, project / "corpus.jsonl", index_path))
    message = str(caught.value)
    assert f"{index_path}: index_path is outside the output folder {project / 'output'}" in message
    assert "ULTRA_ALLOW_OUTSIDE_OUTPUT=1" in message
    assert not (project / "elsewhere").exists()
    assert not (project / "output").exists()  # no run file written either


def test_links_leading_out_of_output_are_refused_and_left_untouched(project: Path) -> None:
    outside = project / "outside"
    (outside / "bm25").mkdir(parents=True)
    (outside / "bm25" / "notes.txt").write_text("mine")
    (project / "output").mkdir()
    (project / "output" / "link").symlink_to(outside)  # the index_path itself is a link
    (project / "output" / "idx").mkdir()
    (project / "output" / "idx" / "bm25").symlink_to(outside / "bm25")  # its backend folder is a link
    for index_path in ("output/link", "output/idx"):
        with pytest.raises(ToolFailure, match="index_path is outside the output folder"):
            call("retriever_index", corpus_path=str(project / "corpus.jsonl"), index_path=index_path, overwrite=True)
        with pytest.raises(ToolFailure, match="index_path is outside the output folder"):
            call("retriever_search", **arguments("retriever_search", project / "corpus.jsonl", index_path))
    assert sorted(p.name for p in outside.rglob("*")) == ["bm25", "notes.txt"]
    assert (outside / "bm25" / "notes.txt").read_text() == "mine"


def test_an_index_under_output_is_built_and_searched(project: Path) -> None:
    built = call("retriever_index", corpus_path=str(project / "corpus.jsonl"), index_path="output/index/tiny")
    assert built["index_info"]["status"] == "built"
    assert Path(built["index_info"]["folder"]).resolve() == (project / "output/index/tiny/bm25").resolve()
    found = call("retriever_search", q_ls=["parrots"], index_path="output/index/tiny", save_path="output/runs")
    assert found["ret_ids"] == [["d4"]]


def test_the_opt_out_lets_an_index_live_elsewhere(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_OUTSIDE_ENV, "1")
    built = call("retriever_index", corpus_path=str(project / "corpus.jsonl"), index_path=str(project / "elsewhere"))
    assert built["index_info"]["status"] == "built" and (project / "elsewhere/bm25/meta.json").is_file()


def test_ultra_call_reports_the_setting_without_a_traceback(project: Path) -> None:
    far = project / "far"
    done = run_ultra(
        "call", "retriever.retriever_index", f"corpus_path={project / 'corpus.jsonl'}", f"index_path={far}", cwd=project
    )
    assert done.returncode == 1
    assert f"{far}: index_path is outside the output folder" in done.stderr and "Traceback" not in done.stderr
    assert not far.exists()
