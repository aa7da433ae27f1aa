"""retriever_index replaces only folders that hold an index it built; anything else survives."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from servers.retriever.index import FORMAT_ID
from servers.retriever.server import SPEC
from tests.conftest import ROOT, run_ultra
from tests.retriever.conftest import TINY, write_corpus
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools


def index(**arguments):
    return anyio.run(call_local_tool, local_tools(SPEC)["retriever_index"], arguments)


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_users_folder_at_the_index_place_survives(tmp_path: Path, overwrite: bool) -> None:
    corpus = write_corpus(tmp_path, TINY)
    theirs = tmp_path / "idx" / "bm25"
    theirs.mkdir(parents=True)
    (theirs / "thesis.tex").write_text("years of work")
    with pytest.raises(ToolFailure) as caught:
        index(corpus_path=str(corpus), index_path=str(tmp_path / "idx"), overwrite=overwrite)
    assert f"{theirs}: {theirs} is a folder without an index meta.json" in str(caught.value)
    assert (theirs / "thesis.tex").read_text() == "years of work"
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == ["bm25"]  # no building folder left


def test_a_meta_json_that_is_not_ours_is_not_a_licence(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path, TINY)
    theirs = tmp_path / "idx" / "bm25"
    theirs.mkdir(parents=True)
    (theirs / "meta.json").write_text(json.dumps({"format": "someone-else", "backend": "bm25"}))
    (theirs / "data.bin").write_text("keep")
    with pytest.raises(ToolFailure, match="not an index retriever_index built"):
        index(corpus_path=str(corpus), index_path=str(tmp_path / "idx"), overwrite=True)
    assert (theirs / "data.bin").read_text() == "keep"


def test_our_index_is_replaced_and_marked(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path, TINY)
    first = index(corpus_path=str(corpus), index_path=str(tmp_path / "idx"))["index_info"]
    meta = json.loads((tmp_path / "idx" / "bm25" / "meta.json").read_text())
    assert (first["status"], meta["format"]) == ("built", FORMAT_ID)
    again = index(corpus_path=str(corpus), index_path=str(tmp_path / "idx"), overwrite=True)["index_info"]
    assert (again["status"], again["passages"]) == ("built", 4)
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == ["bm25"]


def test_a_link_at_the_index_place_is_left_alone(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path, TINY)
    target = tmp_path / "photos"
    target.mkdir()
    (target / "a.jpg").write_text("jpg")
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "bm25").symlink_to(target)
    with pytest.raises(ToolFailure, match="is a link without an index meta.json"):
        index(corpus_path=str(corpus), index_path=str(tmp_path / "idx"), overwrite=True)
    assert (target / "a.jpg").read_text() == "jpg" and (tmp_path / "idx" / "bm25").is_symlink()


def test_ultra_call_refuses_to_delete(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path, TINY)
    theirs = tmp_path / "idx" / "bm25"
    theirs.mkdir(parents=True)
    (theirs / "notes.txt").write_text("mine")
    done = run_ultra(
        "call", "retriever.retriever_index", f"corpus_path={corpus}", f"index_path={tmp_path / 'idx'}", cwd=ROOT
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{theirs} is a folder without an index meta.json" in done.stderr
    assert (theirs / "notes.txt").read_text() == "mine"
