"""A 3 GB data file with no line end (a sparse file of zero bytes: no disk is used) was read as one line, to a
MemoryError, by the corpus and query readers of retriever_index, generate_queries and umbrela_judge. Each line
of a JSONL, TSV or CSV file now has ``MAX_LINE_CHARS`` at most; over it, the file and line are named. Through a
real MCP stdio client and ``ultra call``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import clear_error
from tests.hostile.test_caps import refused_in_background, refused_over_mcp, spare_mcp
from tests.support.background import Finished
from tests.support.openai_stub import OpenAIStub
from ultra_base.line_limits import MAX_LINE_CHARS
from ultra_kit.readers import read_csv, read_jsonl

UNREACHABLE = {"api_key": "", "base_url": "http://127.0.0.1:9/v1"}
TOO_LONG = f"big.jsonl:1: a line longer than {MAX_LINE_CHARS:,} characters; each line is one record"


def sparse(path: Path, head: str = "") -> Path:
    path.write_text(head)
    with path.open("r+b") as handle:
        handle.truncate(3 * 1024**3)
    return path


@spare_mcp("retriever", "retriever_index", lambda tmp_path: {
    "corpus_path": str(sparse(tmp_path / "big.jsonl")), "index_path": str(tmp_path / "index")})  # fmt: skip
def test_retriever_index_on_a_3_gb_line_over_mcp(background_run: Finished) -> None:
    refused_in_background(background_run, TOO_LONG)


def test_generate_queries_on_a_3_gb_line_over_mcp(tmp_path: Path) -> None:
    big = sparse(tmp_path / "big.jsonl")
    with OpenAIStub() as stub:
        refused_over_mcp(tmp_path, "synth", "generate_queries",
                         {"corpus_path": str(big), "synth_cache": "", "dataset_dir": str(tmp_path / "d"),
                          "synth_llm": {"api_key": "", "base_url": stub.base_url}}, TOO_LONG)  # fmt: skip
        assert stub.request_count == 0


@pytest.mark.parametrize("which", ["corpus_path", "queries_path"])
def test_umbrela_judge_on_a_3_gb_line_through_ultra_call(tmp_path: Path, which: str) -> None:
    sparse(tmp_path / "big.jsonl")
    files = {"corpus_path": str(ROOT / "data/umbrela/corpus.jsonl"),
             "queries_path": str(ROOT / "data/umbrela/queries.jsonl"), which: "big.jsonl"}  # fmt: skip
    done = run_ultra("call", "judge.umbrela_judge", *(f"{k}={v}" for k, v in files.items()),
                     f"run_path={ROOT / 'data/umbrela/run.bm25.trec'}", "judge_cache=", "save_path=output/u",
                     'judge_llm={"api_key": "", "base_url": "http://127.0.0.1:9/v1"}', cwd=tmp_path,
                     env={"ULTRA_READ_ROOTS": f"{tmp_path}:{ROOT / 'data'}"}, timeout=120)  # fmt: skip
    clear_error(done, TOO_LONG)


@pytest.mark.parametrize("reader", [read_jsonl, read_csv])
def test_a_line_after_good_ones_is_named(tmp_path: Path, reader: object) -> None:
    head = '{"id": "1", "text": "a"}\n' if reader is read_jsonl else "id,text\n1,a\n"
    big = sparse(tmp_path / "big.jsonl", head)
    from ultra_base.errors import InputError

    with pytest.raises(InputError, match=f"big.jsonl:{head.count(chr(10)) + 1}: a line longer than"):
        reader(big)
