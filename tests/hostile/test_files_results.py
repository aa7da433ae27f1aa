"""Result files: names reserved atomically, confined to output/, full disks reported cleanly."""

from __future__ import annotations

import errno
import multiprocessing
import os
import sqlite3
from pathlib import Path

import anyio
import pytest

from servers.retriever.server import SPEC
from tests.conftest import ROOT, run_ultra
from tests.retriever.conftest import TINY, write_corpus
from ultra_base.errors import InputError
from ultra_kit import files
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools
from ultra_kit.paths.output_root import ALLOW_OUTSIDE_ENV
from ultra_llm.cache import AnswerCache, CachedAnswer


def tool(name: str, **arguments):
    return anyio.run(call_local_tool, local_tools(SPEC)[name], arguments)


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A BM25 index of the tiny corpus; the working directory is tmp_path (so output/ is tmp_path/output)."""
    monkeypatch.chdir(tmp_path)
    corpus = write_corpus(tmp_path, TINY)
    tool("retriever_index", corpus_path=str(corpus), index_path=str(tmp_path / "output" / "index"))
    return str(tmp_path / "output" / "index")  # an index_path, like a save_path, must lie under output/


def search(index_path: str, save_path: str, qid: str = "q1") -> str:
    return tool("retriever_search", q_ls=["cat"], id_ls=[qid], index_path=index_path, save_path=save_path)["run_path"]


def _search_in_parallel(folder: str, index_path: str, qid: str, barrier, results) -> None:
    os.chdir(folder)
    local = local_tools(SPEC)["retriever_search"]  # imports done before the start line
    barrier.wait()
    arguments = {"q_ls": ["cat"], "id_ls": [qid], "index_path": index_path, "save_path": "output/run.trec"}
    results.put((qid, anyio.run(call_local_tool, local, arguments)["run_path"]))


def test_eight_processes_sharing_a_save_path_get_eight_files(tmp_path: Path, index: str) -> None:
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(8), context.Queue()
    workers = [
        context.Process(target=_search_in_parallel, args=(str(tmp_path), index, f"p{i}", barrier, results))
        for i in range(8)
    ]
    for worker in workers:
        worker.start()
    got = dict(results.get(timeout=120) for _ in workers)
    for worker in workers:
        worker.join(timeout=60)
    assert len(set(got.values())) == 8
    for qid, run_path in got.items():
        lines = (tmp_path / run_path).read_text().splitlines()
        assert lines and {line.split()[0] for line in lines} == {qid}  # its own process's run, whole
    written = sorted(p.name for p in (tmp_path / "output").iterdir() if p.name != "index")
    assert written == ["run.trec"] + [f"run_{i}.trec" for i in range(1, 8)]


@pytest.mark.parametrize(
    ("save_path", "message"),
    [
        ("output/../../../../x", "is outside the output folder"),
        ("{tmp}/elsewhere", "is outside the output folder"),
        ("output/run.json", "names a file ending '.json', but retriever_search writes .trec files"),
        ("output/notes.txt", "names a file ending '.txt'"),
    ],
)
def test_save_path_is_confined(index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, save_path, message) -> None:
    monkeypatch.delenv(ALLOW_OUTSIDE_ENV)
    save_path = save_path.format(tmp=tmp_path)
    escaped = tmp_path.parents[2] / "x"  # where output/../../../../x lands
    existed = escaped.exists()  # the machine may have such a folder already: it must stay as it was
    with pytest.raises(ToolFailure, match=message) as caught:
        search(index, save_path)
    assert f"{save_path}: " in str(caught.value)
    assert not (tmp_path / "elsewhere").exists() and escaped.exists() == existed
    assert [p.name for p in (tmp_path / "output").iterdir()] == ["index"]  # no run file written


def test_links_out_of_output_are_refused_and_the_opt_out_works(
    index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ALLOW_OUTSIDE_ENV)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "output").mkdir(exist_ok=True)  # the index is there already
    (tmp_path / "output" / "link").symlink_to(outside)
    with pytest.raises(ToolFailure, match="is outside the output folder"):
        search(index, "output/link")
    assert Path(search(index, "output/runs")).parent == Path("output/runs").resolve()  # returned absolute
    monkeypatch.setenv(ALLOW_OUTSIDE_ENV, "1")
    assert Path(search(index, str(outside))).parent == outside


def test_ultra_call_confines_save_path(index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ALLOW_OUTSIDE_ENV)
    arguments = ("call", "retriever.retriever_search", "q_ls=[cat]", f"index_path={index}")
    refused = run_ultra(*arguments, f"save_path={tmp_path / 'elsewhere'}", cwd=tmp_path)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "is outside the output folder" in refused.stderr and "ULTRA_ALLOW_OUTSIDE_OUTPUT=1" in refused.stderr
    assert not (tmp_path / "elsewhere").exists()
    allowed = run_ultra(
        *arguments,
        f"save_path={tmp_path / 'elsewhere'}",
        cwd=tmp_path,
        env={"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1", "PYTHONPATH": str(ROOT)},
    )
    assert allowed.returncode == 0, allowed.stderr
    assert len(list((tmp_path / "elsewhere").glob("retriever_search_*.trec"))) == 1


class _FullDisk:
    """A text handle that writes a little, then fails as a full disk does."""

    def __init__(self, handle) -> None:
        self._handle = handle

    def write(self, text: str) -> int:
        self._handle.write(text[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self._handle.close()


@pytest.mark.parametrize("where", ["write", "fsync"])
def test_a_full_disk_is_reported_and_leaves_no_partial_file(
    index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    first = search(index, "output/run.trec")
    before = Path(first).read_text()
    if where == "write":
        real_fdopen = os.fdopen
        monkeypatch.setattr(files.os, "fdopen", lambda *a, **k: _FullDisk(real_fdopen(*a, **k)))
    else:

        def full_fsync(fd: int) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(files.os, "fsync", full_fsync)
    with pytest.raises(ToolFailure, match=r"no space left on device writing /\S*/output/run_1\.trec"):
        search(index, "output/run.trec")
    assert sorted(p.name for p in (tmp_path / "output").iterdir() if p.name != "index") == ["run.trec"]
    assert Path(first).read_text() == before


def test_a_full_disk_keeps_the_answer_cache_intact(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path / "judge.sqlite")
    for i in range(3):
        cache.put(f"k{i}", model_id="m", prompt="p", request={"i": i}, answer=CachedAnswer(f"a{i}", None, 1, 1))
    pages = cache._db.execute("PRAGMA page_count").fetchone()[0]
    cache._db.execute(f"PRAGMA max_page_count = {pages}")  # SQLite now fails as on a full disk
    big = CachedAnswer("x" * 200_000, None, 1, 1)
    with pytest.raises(InputError, match=f"no space left on device writing {tmp_path / 'judge.sqlite'}"):
        cache.put("k3", model_id="m", prompt="p", request={}, answer=big)
    assert len(cache) == 3 and cache.get("k3") is None and cache.get("k1").text == "a1"
    cache.close()
    reopened = sqlite3.connect(tmp_path / "judge.sqlite")
    assert reopened.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert reopened.execute("SELECT COUNT(*) FROM answers").fetchone() == (3,)
