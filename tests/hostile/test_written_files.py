"""YAML and JSON the project writes (or ships) and reads back go through the shared size and depth limits (issue 40,
"Every JSON and YAML the project reads"): the annotate scales table, the NeMo translation table, the estimate ledger,
and an LLM reply the judge reads a JSON score from. A crafted file over a limit is a clear InputError naming the file
(a reply: an unreadable reply, counted), never a RecursionError or a read of gigabytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.support.openai_stub import OpenAIStub
from ultra_base.errors import InputError
from ultra_client.annotate.scales import SCALES, built_in
from ultra_client.compat.nemo.metrics import TABLE, TABLE_FILE, read_table
from ultra_llm.estimate import read_ledger

DEEP_YAML = "a: " + "[" * 3000 + "]" * 3000 + "\n"
DEEP_JSON = '{"key": ' + "[" * 100_000 + "]" * 100_000 + "}"


def sparse(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


@pytest.mark.parametrize(("reader", "shipped"), [(built_in, SCALES), (read_table, TABLE_FILE)])
def test_a_shipped_table_too_deep_is_refused(tmp_path: Path, reader, shipped: Path) -> None:
    table = tmp_path / shipped.name
    table.write_text(DEEP_YAML)
    with pytest.raises(InputError) as caught:
        reader(table)
    assert str(caught.value).startswith(f"{table}:1: nested more than 100 levels deep")


@pytest.mark.parametrize(("reader", "shipped"), [(built_in, SCALES), (read_table, TABLE_FILE)])
def test_a_shipped_table_too_large_is_refused_unread(tmp_path: Path, reader, shipped: Path) -> None:
    table = sparse(tmp_path / shipped.name, 10**9)
    with pytest.raises(InputError, match=r"the file is 1,000,000,000 bytes, more than the 1,048,576 bytes"):
        reader(table)


def test_the_shipped_tables_read_as_before() -> None:
    assert set(built_in()) >= {"umbrela"} and TABLE["metrics"] and read_table() == TABLE


def test_a_ledger_line_nested_too_deep_is_refused(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text(json.dumps({"key": "k", "model": "m"}) + "\n" + DEEP_JSON + "\n")
    with pytest.raises(InputError) as caught:
        read_ledger(ledger)
    assert str(caught.value).startswith(f"{ledger}:1: JSON nested deeper than 100 levels")


def test_a_ledger_reads_its_records_from_an_offset(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text('{"key": "a"}\n{"key": "b"}\n{"key": "c"')  # the last line is still being written
    records, offset = read_ledger(ledger)
    assert [r["key"] for r in records] == ["a", "b"] and offset == len('{"key": "a"}\n{"key": "b"}\n')
    assert read_ledger(ledger, offset) == ([], offset)


def test_a_ledger_line_too_long_is_refused_unheld(tmp_path: Path) -> None:
    """The ledger is read line by line from the offset (it was read whole), each line within MAX_LINE_CHARS."""
    from ultra_base.line_limits import MAX_LINE_CHARS

    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text('{"key": "a"}\n')
    records, offset = read_ledger(ledger)
    with ledger.open("r+b") as handle:
        handle.truncate(offset + MAX_LINE_CHARS + 1)
    with pytest.raises(InputError) as caught:
        read_ledger(ledger, offset)
    assert str(caught.value).startswith(f"{ledger}: a line longer than {MAX_LINE_CHARS:,} bytes")
    assert [r["key"] for r in records] == ["a"]


def test_a_judge_reply_nested_100000_deep_is_an_unreadable_reply(tmp_path: Path) -> None:
    """Through the real CLI: the reply is counted as one that holds no grade, not an unexpected RecursionError."""
    with OpenAIStub(lambda request: DEEP_JSON.replace("key", "score")) as stub:
        llm = json.dumps({"api_key": "", "base_url": stub.base_url, "model_id": "m", "max_retries": 0})
        done = run_ultra("call", "judge.umbrela_judge", "query=q", 'passages=["p"]', f"judge_llm={llm}",
                         "judge_cache=", f"save_path={tmp_path / 'j'}", cwd=tmp_path, timeout=300)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "RecursionError" not in done.stderr and "unexpected error" not in done.stderr, done.stderr
    assert "every one of 1 judgments failed (parse_error 1)" in done.stderr
    assert "no '##final score: N' marker, JSON score or explicit score phrase" in done.stderr


@pytest.mark.parametrize("damaged", ["vocab.index.json", "params.index.json", "passages.jsonl"])
def test_a_bm25_index_file_nested_too_deep_is_refused_naming_it(tmp_path: Path, damaged: str) -> None:
    """The index files retriever_index wrote, read back by retriever_search (bm25s reads its own JSON with orjson,
    depth-limited): a crafted one is an error naming the index and what to do, not an "unexpected error"."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": f"cats and dogs {i}"}) + "\n" for i in range(4)))
    env = {"ULTRA_READ_ROOTS": str(tmp_path), "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}
    index = tmp_path / "idx"
    built = run_ultra("call", "retriever.retriever_index", f"corpus_path={corpus}", f"index_path={index}", cwd=tmp_path,
                      env=env, timeout=300)  # fmt: skip
    assert built.returncode == 0, built.stderr
    (index / "bm25" / damaged).write_text(DEEP_JSON + "\n")
    done = run_ultra("call", "retriever.retriever_search", 'q_ls=["cats"]', f"index_path={index}",
                     f"save_path={tmp_path / 'r'}", cwd=tmp_path, env=env, timeout=300)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr and "unexpected error" not in done.stderr, (
        done.stderr
    )
    if damaged == "passages.jsonl":
        assert f"{index / 'bm25' / damaged}:1: JSON nested deeper than 100 levels" in done.stderr
    else:
        assert f"{index / 'bm25'}: the bm25 index files cannot be read (JSONDecodeError" in done.stderr
        assert "rebuild the index with retriever_index and overwrite=true" in done.stderr
