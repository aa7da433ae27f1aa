"""``benchmark.max_bytes``: get_data refuses, unread, a data file larger than the limit, saying how to raise it."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from servers.benchmark.server import SPEC
from tests.conftest import ROOT, run_ultra
from ultra_kit.inprocess import ToolFailure, call_local_tool, local_tools
from ultra_kit.settings import defaults

KEY_MAP = {"q_ls": "question", "id_ls": "id"}


def get_data(**benchmark):
    return anyio.run(call_local_tool, local_tools(SPEC)["get_data"], {"benchmark": benchmark})


def write_rows(path: Path, count: int) -> Path:
    rows = [{"id": f"q{i}", "question": f"question number {i}?"} for i in range(count)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_file_above_the_limit_is_refused_with_the_limit_and_how_to_raise_it(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "big.jsonl", 40)
    size = data.stat().st_size
    assert 1000 < size < 2000
    with pytest.raises(ToolFailure) as caught:
        get_data(path=str(data), key_map=KEY_MAP, max_bytes=1000)
    message = str(caught.value)
    assert f"{data}: the file is {size:,} bytes, more than benchmark.max_bytes = 1,000 bytes allows" in message
    assert "Raise benchmark.max_bytes" in message
    loaded = get_data(path=str(data), key_map=KEY_MAP, max_bytes=size)  # a file of exactly the limit is read
    assert loaded["id_ls"] == [f"q{i}" for i in range(40)]


def test_a_json_file_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    data = tmp_path / "broken.json"
    data.write_text("[" + "{" * 5000)  # parsing it would fail (or nest too deep): the size check comes first
    with pytest.raises(ToolFailure, match=r"the file is 5,001 bytes, more than benchmark.max_bytes = 100 bytes"):
        get_data(path=str(data), key_map=KEY_MAP, max_bytes=100)


def test_each_file_of_a_beir_folder_is_checked(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    corpus = [{"_id": f"d{i}", "title": "", "text": "some passage text " * 5} for i in range(20)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(row) + "\n" for row in corpus))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "what?"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    refused = r"beir/corpus\.jsonl: the file is [\d,]+ bytes, more than benchmark.max_bytes"
    with pytest.raises(ToolFailure, match=refused):
        get_data(path=str(folder), key_map={"q_ls": "question"}, max_bytes=500)
    loaded = get_data(path=str(folder), key_map={"q_ls": "question", "gt_ls": "relevant_docs"}, max_bytes=10_000)
    assert loaded["q_ls"] == ["what?"] and loaded["gt_ls"] == [["d1"]]


@pytest.mark.parametrize("value", [0, -5])
def test_the_limit_must_be_a_positive_number_of_bytes(tmp_path: Path, value: int) -> None:
    data = write_rows(tmp_path / "d.jsonl", 2)
    with pytest.raises(ToolFailure, match=f"benchmark.max_bytes must be a positive number of bytes, not {value}"):
        get_data(path=str(data), key_map=KEY_MAP, max_bytes=value)


def test_the_default_limit_reads_the_sample_data() -> None:
    limit = defaults("benchmark")["benchmark"]["max_bytes"]
    assert (ROOT / "data" / "sample_qa.jsonl").stat().st_size < limit
    loaded = get_data(path=str(ROOT / "data" / "sample_qa.jsonl"), key_map=KEY_MAP)
    assert loaded["data_info"]["kept_rows"] == loaded["data_info"]["total_rows"] > 0


def test_ultra_call_reports_the_limit_without_a_traceback(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "big.jsonl", 40)
    done = run_ultra("call", "benchmark.get_data", f"benchmark.path={data}", "benchmark.max_bytes=1000", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "more than benchmark.max_bytes = 1,000 bytes allows; it was not read" in done.stderr
