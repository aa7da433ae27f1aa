"""JSON Lines (and TSV) files read line by line have a size limit per line, not per file (issue 40: every JSON the
project reads within the same limits; a corpus may legitimately be many GB): ``ultra_base.line_limits.MAX_LINE_CHARS``.
A file with no line end was one line, read whole into memory; now it is refused naming the file, the line and what
to do, after reading at most the limit. Through the real ``ultra call``, on sparse files (their zeros take no room on
disk) one character over the limit, the readers test_long_lines.py leaves out: the retriever's own passages.jsonl,
the MT-RAG task file, the judge's TSV queries and batch result files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import clear_error
from ultra_base.line_limits import MAX_LINE_CHARS

UMBRELA = ROOT / "data" / "umbrela"
TOO_LONG = f"a line longer than {MAX_LINE_CHARS:,} characters; each line is one record"
ADVICE = "check that it is the file meant (a file with no line ends is read as one line), or split the record"
NO_LLM = 'judge_llm={"model_id": "m", "base_url": "http://127.0.0.1:9/v1"}'


def long_line_file(path: Path, *, before: str = "") -> Path:
    """``before`` (whole lines), then one line of MAX_LINE_CHARS + 1 zero bytes with no end, in a sparse file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.write(before.encode())
        handle.truncate(len(before.encode()) + MAX_LINE_CHARS + 1)
    return path


def call(tool: str, *arguments: str, tmp_path: Path):
    return run_ultra("call", tool, *arguments, cwd=ROOT, env={"ULTRA_READ_ROOTS": str(tmp_path)}, timeout=300)


def refused(done, path: Path, line: int) -> None:
    clear_error(done, f"{path}:{line}: {TOO_LONG}", ADVICE)
    assert done.stdout == "", done.stdout


def test_retriever_passages_jsonl_line_too_long(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "d1", "text": "the cat sat"}\n{"id": "d2", "text": "a dog ran"}\n')
    index = tmp_path / "idx"
    built = call("retriever.retriever_index", f"corpus_path={corpus}", f"index_path={index}", tmp_path=tmp_path)
    assert built.returncode == 0, built.stderr
    passages = long_line_file(index / "bm25" / "passages.jsonl")
    done = call(
        "retriever.retriever_search",
        'q_ls=["cat"]',
        f"index_path={index}",
        f"save_path={tmp_path / 'runs'}",
        tmp_path=tmp_path,
    )
    refused(done, passages, 1)
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").iterdir())


def test_mtrag_task_file_line_too_long(tmp_path: Path) -> None:
    tasks = long_line_file(tmp_path / "tasks.jsonl")
    done = call(
        "evaluation.mtrag_evaluated_records",
        'id_ls=["t1"]',
        'answerability_ls=["ANSWERABLE"]',
        "algorithmic_res={}",
        "idk_items=[]",
        "faithfulness_items=[]",
        "rag_items=[]",
        f"data_info={json.dumps({'path': str(tasks)})}",
        f"save_path={tmp_path / 'out'}",
        tmp_path=tmp_path,
    )
    refused(done, tasks, 1)
    assert not (tmp_path / "out").exists()


def umbrela_on(queries: Path, tmp_path: Path):
    """``umbrela_judge`` on the sample corpus and run with ``queries``, depth 1, no LLM reachable."""
    return call(
        "judge.umbrela_judge",
        f"queries_path={queries}",
        f"corpus_path={UMBRELA / 'corpus.jsonl'}",
        f"run_path={UMBRELA / 'run.bm25.trec'}",
        "depth=1",
        "judge_cache=",
        NO_LLM,
        f"save_path={tmp_path / 'judged'}",
        tmp_path=tmp_path,
    )


def test_judge_queries_tsv_line_too_long(tmp_path: Path) -> None:
    queries = long_line_file(tmp_path / "queries.tsv", before="q1\tfirst question\n")
    done = umbrela_on(queries, tmp_path)
    refused(done, queries, 2)


def test_judge_queries_tsv_not_utf8(tmp_path: Path) -> None:
    """A TSV queries file that is not UTF-8 was an 'unexpected error: UnicodeDecodeError' (the JSONL reader beside it
    said which file): both are read by the kit's reader now."""
    queries = tmp_path / "queries.tsv"
    queries.write_bytes(b"q1\tfirst \xff question\n")
    done = umbrela_on(queries, tmp_path)
    clear_error(done, f"{queries}: not valid UTF-8 text (invalid start byte)")
    assert "unexpected error" not in done.stderr and done.stdout == ""


def test_batch_results_line_too_long(tmp_path: Path) -> None:
    results = long_line_file(tmp_path / "output.jsonl")
    cache = tmp_path / "cache.sqlite"
    done = call(
        "judge.import_results", f"results_paths={json.dumps([str(results)])}", f"judge_cache={cache}", tmp_path=tmp_path
    )
    refused(done, results, 1)


def test_lines_within_the_limit_still_read(tmp_path: Path) -> None:
    """The limit is per line: a corpus of many ordinary lines indexes as before, with a BOM and CRLF ends."""
    corpus = tmp_path / "corpus.jsonl"
    lines = [json.dumps({"id": f"d{i}", "text": f"passage number {i} about cats"}) for i in range(50)]
    corpus.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    done = call(
        "retriever.retriever_index", f"corpus_path={corpus}", f"index_path={tmp_path / 'idx'}", tmp_path=tmp_path
    )
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "idx" / "bm25" / "meta.json").read_text())
    assert meta["passages"] == 50


def test_batch_results_not_utf8(tmp_path: Path) -> None:
    """An output file that is not UTF-8 was an 'unexpected error: UnicodeDecodeError'."""
    results = tmp_path / "output.jsonl"
    results.write_bytes(b'\xff\xfe{"custom_id": "x"}\n')
    done = call(
        "judge.import_results",
        f"results_paths={json.dumps([str(results)])}",
        f"judge_cache={tmp_path / 'cache.sqlite'}",
        tmp_path=tmp_path,
    )
    clear_error(done, f"{results}: not valid UTF-8 text (invalid start byte); a batch output file is UTF-8 JSON Lines")
    assert "unexpected error" not in done.stderr and done.stdout == ""
