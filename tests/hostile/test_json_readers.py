"""Every JSON and YAML reader is on the shared size and depth limits (issue 40, "What must be true" 1): the pytest
plugin, NeMo results, sweep trial records, the report's sources and readers. An over-deep or over-large file is a
clear error naming the file, the limit and what to do, or (where a reader can do without it) a note, never a
RecursionError or a read of gigabytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.support.background import Finished, in_background
from tests.support.mcp_probe import over_mcp
from ultra_client.compat.nemo.results import write_results
from ultra_client.errors import UltraError
from ultra_client.pytest_plugin import merged_parameters
from ultra_client.sweep.trials import RECORD, TrialStore, _result_file_rows
from ultra_kit.limits.json_files import MAX_RECORD_BYTES

DEEP = "[" * 100_000 + "]" * 100_000
DEPTH = "JSON nested deeper than 100 levels"
DEPTH_ADVICE = "Check that it is the file meant, or flatten its nesting"


def sparse(path: Path, size: int) -> Path:
    """A file of ``size`` bytes that takes no room on disk (its size is what the limit reads first)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


def test_pytest_plugin_refuses_a_deep_parameter_file(tmp_path: Path) -> None:
    pipeline = tmp_path / "p.yaml"
    deep = tmp_path / "deep_parameter.yaml"
    deep.write_text("benchmark:\n  benchmark: " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception) as caught:
        merged_parameters(pipeline, None, deep)
    assert str(deep) in str(caught.value) and "nested more than 100 levels deep" in str(caught.value)


def test_pytest_plugin_refuses_an_oversized_parameter_file(tmp_path: Path) -> None:
    big = sparse(tmp_path / "big_parameter.yaml", 2 * 1024 * 1024)
    with pytest.raises(pytest.fail.Exception) as caught:
        merged_parameters(tmp_path / "p.yaml", None, big)
    assert str(big) in str(caught.value) and "more than the 1,048,576 bytes" in str(caught.value)


def test_nemo_results_from_a_deep_memory(tmp_path: Path) -> None:
    (tmp_path / "memory.json").write_text(DEEP, encoding="utf-8")
    with pytest.raises(UltraError) as caught:
        write_results(tmp_path, {"em": ("eval_res", "em")}, "task")
    message = str(caught.value)
    assert f"{tmp_path / 'memory.json'}: line 1: {DEPTH}" in message and DEPTH_ADVICE in message
    assert "no NeMo results.json was written" in message and not (tmp_path / "results.json").exists()


def test_nemo_results_from_an_oversized_memory(tmp_path: Path) -> None:
    sparse(tmp_path / "memory.json", MAX_RECORD_BYTES + 1)
    with pytest.raises(UltraError) as caught:
        write_results(tmp_path, {"em": ("eval_res", "em")}, "task")
    assert f"more than the {MAX_RECORD_BYTES:,} bytes" in str(caught.value)
    assert "No file ultra writes is that large" in str(caught.value)


def test_sweep_reruns_a_trial_whose_record_is_too_deep(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    store = TrialStore(tmp_path)
    fp = "a" * 64
    store.folder(fp).mkdir(parents=True)
    (store.folder(fp) / RECORD).write_text(DEEP, encoding="utf-8")
    assert store.finished(fp) is None
    said = capsys.readouterr().err
    assert f"{RECORD}: line 1: {DEPTH}" in said and "the trial runs again" in said
    (store.folder(fp) / RECORD).write_text(json.dumps({"fingerprint": fp, "status": "ok"}), encoding="utf-8")
    assert store.finished(fp) == {"fingerprint": fp, "status": "ok"}  # a readable one is still found


def test_sweep_reads_no_rows_from_a_deep_or_oversized_result(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP, encoding="utf-8")
    big = sparse(tmp_path / "big.json", MAX_RECORD_BYTES + 1)
    assert _result_file_rows(str(deep)) == {} and _result_file_rows(str(big)) == {}


def test_report_refuses_a_deep_result_file(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP, encoding="utf-8")
    done = run_ultra("report", str(deep), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"error: {deep}:1: {DEPTH}" in done.stderr and DEPTH_ADVICE in done.stderr


def test_report_refuses_an_oversized_result_file(tmp_path: Path) -> None:
    big = sparse(tmp_path / "big.json", MAX_RECORD_BYTES + 1)
    done = run_ultra("report", str(big), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"more than the {MAX_RECORD_BYTES:,} bytes a result file may have; it was not read" in done.stderr


def test_report_skips_a_deep_file_of_a_run_folder_and_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "run_20260101_101010"
    (folder / "files").mkdir(parents=True)
    (folder / "memory.json").write_text('{"id_ls": ["a"]}', encoding="utf-8")
    (folder / "files" / "eval.json").write_text(DEEP, encoding="utf-8")
    (folder / "files" / "records.jsonl").write_text('{"a": 1}\n' + DEEP + "\n", encoding="utf-8")
    done = run_ultra("report", str(folder), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"eval.json is not readable JSON (line 1: {DEPTH}" in done.stderr


def test_report_refuses_a_deep_memory_of_a_run_folder(tmp_path: Path) -> None:
    folder = tmp_path / "run_20260101_101010"
    (folder / "files").mkdir(parents=True)
    (folder / "memory.json").write_text(DEEP, encoding="utf-8")
    done = run_ultra("report", str(folder), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"error: {folder / 'memory.json'}:1: {DEPTH}" in done.stderr, done.stderr


def test_judge_queries_with_a_deep_line(tmp_path: Path) -> None:
    from servers.judge.common.inputs import read_queries
    from ultra_base.errors import InputError

    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"id": "q1", "question": "a"}\n{"id": "q2", "question": ' + DEEP + "}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_queries(queries)
    assert str(caught.value).startswith(f"{queries}:2: {DEPTH}")


def test_a_deep_index_meta_is_no_index(tmp_path: Path) -> None:
    from servers.retriever.index import META, read_meta

    (tmp_path / META).write_text(DEEP, encoding="utf-8")
    assert read_meta(tmp_path) is None  # rebuilt, as a missing or malformed one is
    (tmp_path / META).write_text('{"backend": "bm25"}', encoding="utf-8")
    assert read_meta(tmp_path) == {"backend": "bm25"}


def test_runs_lists_a_tampered_index_row_as_unreadable(tmp_path: Path) -> None:
    import sqlite3

    output = tmp_path / "output"
    folder = output / "good_20260101_101010"
    folder.mkdir(parents=True)
    (folder / "memory.json").write_text('{"eval_res": {"map": 0.5}}', encoding="utf-8")
    assert run_ultra("runs", "--output-dir", str(output), cwd=tmp_path).returncode == 0  # builds the index
    with sqlite3.connect(output / "runs.sqlite") as connection:
        connection.execute("UPDATE runs SET metrics = ?", ('{"a": ' + DEEP + "}",))
    done = run_ultra("runs", "--output-dir", str(output), "--json", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"runs.sqlite (good_20260101_101010):1: {DEPTH}" in done.stderr and "ultra runs --rebuild" in done.stderr
    (row,) = json.loads(done.stdout)
    assert row["status"] == "unreadable" and row["metrics"] == {}


def test_annotate_refuses_a_deep_body_with_400(tmp_path: Path) -> None:
    import httpx

    from tests.client.annotate.serving import Client, annotate_server, write_dataset

    data = write_dataset(tmp_path)
    with annotate_server(tmp_path, str(data), "--scale", "binary", "--annotator", "ann") as (base, _):
        client = Client(base)
        deep = '{"item_id": "x", "value": ' + "[" * 2000 + "]" * 2000 + "}"
        headers = {"X-CSRF-Token": client.csrf, "Content-Type": "application/json"}
        answer = httpx.post(base + "/api/label", content=deep, headers=headers, timeout=30)
        assert answer.status_code == 400 and DEPTH in answer.text, answer.text
        assert client.next() is not None  # the server goes on


DEEP_OBJECT = '{"a":' * 5000 + "1" + "}" * 5000


def test_a_trace_whose_answer_is_json_nested_5000_deep(tmp_path: Path) -> None:
    """A span attribute holding JSON text is parsed within the depth limit; a deeper one stays text (it crashed the
    reader with a RecursionError)."""
    from tests.benchmark.traces.test_bad_input import request, span

    path = tmp_path / "deep.jsonl"
    path.write_text(request(span("a" * 16, None, "CHAIN", input_value="Q?", output_value=DEEP_OBJECT)) + "\n")
    done = run_ultra("call", "benchmark.get_data", f"benchmark.path={path}", "benchmark.format=otlp",
                     "benchmark.key_map={q_ls: question, pred_ls: answer}", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["q_ls"] == ["Q?"] and result["pred_ls"] == [DEEP_OBJECT]


def test_an_otlp_line_whose_attribute_nests_past_the_limit(tmp_path: Path) -> None:
    """An attribute value of arrays in arrays (``arrayValue``) decodes within msgspec's own bound; the shared
    100-level limit refuses it all the same, naming the line."""
    from tests.benchmark.traces.test_bad_input import request, span

    value: dict = {"stringValue": "x"}
    for _ in range(40):  # 3 JSON levels each
        value = {"arrayValue": {"values": [value]}}
    deep = span("a" * 16, None, "CHAIN", input_value="Q?", output_value="A.")
    deep["attributes"].append({"key": "app.tags", "value": value})
    path = tmp_path / "deep.jsonl"
    path.write_text(request(span("b" * 16, None, "CHAIN", trace="2" * 32, input_value="Q?")) + "\n"
                    + request(deep) + "\n", encoding="utf-8")  # fmt: skip
    done = run_ultra("call", "benchmark.get_data", f"benchmark.path={path}", "benchmark.format=otlp",
                     "benchmark.key_map={q_ls: question}", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{path}:2: {DEPTH}" in done.stderr


def test_a_langsmith_line_nested_too_deep(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    run = {"id": "r1", "trace_id": "t1", "run_type": "chain", "inputs": {"question": "Q?"}, "outputs": {"answer": "A"}}
    path.write_text(json.dumps(run) + "\n" + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    done = run_ultra("call", "benchmark.get_data", f"benchmark.path={path}", "benchmark.format=langsmith",
                     "benchmark.key_map={q_ls: question}", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{path}:2: {DEPTH}" in done.stderr


def test_a_price_file_too_deep_or_too_large(tmp_path: Path) -> None:
    from ultra_base.errors import InputError
    from ultra_llm.prices import PRICES_ENV, read_price_file

    deep = tmp_path / "deep.yaml"
    deep.write_text("models: " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_price_file(deep)
    assert f"{deep}:1: nested more than 100 levels deep" in str(caught.value) and PRICES_ENV in str(caught.value)
    big = sparse(tmp_path / "big.yaml", 2 * 1024 * 1024)
    with pytest.raises(InputError, match="more than the 1,048,576 bytes a price file may have"):
        read_price_file(big)


def test_a_batch_result_line_too_deep(tmp_path: Path) -> None:
    from ultra_base.errors import InputError
    from ultra_llm.batch_mode.files import read_outcomes

    results = tmp_path / "out.jsonl"
    results.write_text('{"custom_id": "a", "response": ' + DEEP_OBJECT + "}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(read_outcomes(results))
    assert str(caught.value).startswith(f"{results}:1: {DEPTH}")


def test_a_tool_result_text_too_deep_stays_text() -> None:
    from types import SimpleNamespace

    from ultra_client.calls.server_pool import structured_result

    deep = "[" * 5000 + "]" * 5000
    result = SimpleNamespace(structured_content=None, content=[SimpleNamespace(text=deep)])
    assert structured_result(result) == {"result": deep}  # it raised RecursionError
    result = SimpleNamespace(structured_content=None, content=[SimpleNamespace(text='{"a": [1]}')])
    assert structured_result(result) == {"a": [1]}


def test_a_target_journal_line_too_deep_is_skipped(tmp_path: Path) -> None:
    from servers.target.records.journal import Journal

    journal = Journal(tmp_path, "k")
    journal.path.parent.mkdir(parents=True)
    journal.path.write_text('{"id": "1", "status": "ok"}\n' + DEEP_OBJECT + "\n", encoding="utf-8")
    assert journal.completed() == {"1": {"id": "1", "status": "ok"}}


def test_a_target_journal_line_too_long_is_skipped_unheld(tmp_path: Path) -> None:
    """A line over MAX_LINE_CHARS (sparse zeros) is skipped, read in pieces; the lines around it are kept."""
    from servers.target.records.journal import Journal
    from ultra_base.line_limits import MAX_LINE_CHARS

    journal = Journal(tmp_path, "k")
    journal.path.parent.mkdir(parents=True)
    first = b'{"id": "1", "status": "ok"}\n'
    with journal.path.open("wb") as handle:
        handle.write(first)
        handle.truncate(len(first) + 3 * MAX_LINE_CHARS)
        handle.seek(0, 2)
        handle.write(b'\n{"id": "2", "status": "ok"}\n')
    assert sorted(journal.completed()) == ["1", "2"]


def oversized_judge_file(tmp_path: Path) -> dict:
    big = sparse(tmp_path / "judge.json", MAX_RECORD_BYTES + 1)
    return {"samples": {"a": [str(big)], "b": [str(big)]}, "save_path": str(tmp_path / "c.json")}


@in_background(over_mcp("evaluation", "compare_judged", oversized_judge_file), spare=True)
def test_compare_judged_refuses_an_oversized_judge_file_over_mcp(background_run: Finished) -> None:
    from tests.hostile.test_caps import refused_in_background

    expected = f"more than the {MAX_RECORD_BYTES:,} bytes a result file may have; it was not read"
    refused_in_background(background_run, expected)
