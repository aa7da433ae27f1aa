"""No silent empty success, through the real CLI (in process and over MCP stdio): get_data that keeps no record,
and generate_queries whose LLM requests nearly all failed, fail with the reasons and write nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error
from tests.support.openai_stub import OpenAIStub
from tests.synth.conftest import small_corpus

CANARY = "CANARY-5e1d9c"  # planted in fields no key_map names: never in a message
MODES = [pytest.param([], id="in-process"), pytest.param(["--stdio"], id="mcp-stdio")]


def call(project: Path, mode: list[str], *args: str, timeout: float = 120):
    """``ultra call`` run in ``project`` (the data lies inside it, a read root)."""
    return run_ultra("call", *mode, *args, cwd=project, env={"ULTRA_READ_ROOTS": str(project)}, timeout=timeout)


def refused_without_output(project: Path, result, *fragments: str) -> None:
    clear_error(result, *fragments)
    assert result.stdout.strip() == "" and CANARY not in result.stderr + result.stdout
    assert not (project / "output").exists()


@pytest.mark.parametrize("mode", MODES)
def test_get_data_on_all_nan_jsonl_fails_with_the_drop_reasons(tmp_path: Path, mode: list[str]) -> None:
    rows = [
        f'{{"q": NaN, "a": ["x"], "note": "{CANARY}"}}',
        f'{{"q": "fine", "a": [NaN], "note": "{CANARY}"}}',
        f'{{"q": "no answer", "note": "{CANARY}"}}',
    ]
    (tmp_path / "all_nan.jsonl").write_text("\n".join(rows) + "\n")
    result = call(tmp_path, mode, "benchmark.get_data", "benchmark={path: all_nan.jsonl, key_map: {q_ls: q, gt_ls: a}}")
    refused_without_output(
        tmp_path,
        result,
        "all_nan.jsonl: no record kept: read 3 records and dropped every one (",
        "NaN in field 'q': 1",
        "NaN in field 'a': 1",
        "missing or null field 'a': 1",
    )


@pytest.mark.parametrize("mode", MODES)
def test_get_data_on_all_nan_csv_fails_with_the_drop_reasons(tmp_path: Path, mode: list[str]) -> None:
    (tmp_path / "all_nan.csv").write_text(f"question,answer,note\nNaN,x,{CANARY}\nnan,y,{CANARY}\n")
    result = call(tmp_path, mode, "benchmark.get_data", "benchmark={path: all_nan.csv, key_map: {q_ls: question}}")
    says = "all_nan.csv: no record kept: read 2 records and dropped every one (NaN in field 'question': 2)"
    refused_without_output(tmp_path, result, says)


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("empty.jsonl", "", "empty.jsonl: the file is empty (0 bytes): it holds no records"),
        ("empty.json", "", "empty.json: the file is empty (0 bytes): it holds no records"),
        ("header.csv", "question,answer\n", "header.csv: the dataset holds no records (read 0)"),
        ("blank.jsonl", "\n\n", "blank.jsonl: the dataset holds no records (read 0)"),
    ],
)
def test_get_data_on_an_empty_dataset_says_it_is_empty(tmp_path: Path, name: str, text: str, says: str) -> None:
    (tmp_path / name).write_text(text)
    result = call(tmp_path, [], "benchmark.get_data", f"benchmark={{path: {name}, key_map: {{q_ls: question}}}}")
    refused_without_output(tmp_path, result, says)


def test_get_data_keeping_one_record_still_succeeds(tmp_path: Path) -> None:
    (tmp_path / "one.jsonl").write_text('{"q": NaN}\n{"q": "kept"}\n')
    result = call(tmp_path, [], "benchmark.get_data", "benchmark={path: one.jsonl, key_map: {q_ls: q}}")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["q_ls"] == ["kept"] and data["data_info"]["dropped_reasons"] == {"NaN in field 'q'": 1}


@pytest.mark.parametrize("mode", MODES)
def test_generate_queries_fails_when_nearly_every_request_failed(tmp_path: Path, mode: list[str]) -> None:
    corpus = small_corpus(tmp_path / "corpus.jsonl")
    corpus.write_text(corpus.read_text().replace('"text": "', f'"text": "{CANARY} ', 1))
    with OpenAIStub() as stub:
        # one list of the 7 is answered; every other request is refused
        stub.add_fault("reply", match="opinions on political", text='["Who should I vote for?"]')
        stub.add_fault("status", status=403, message="this key may not use the model")
        llm = f"synth_llm={{backend: openai, base_url: '{stub.base_url}', model_id: stub, api_key: not-a-secret, "
        llm += "max_retries: 0}"
        result = call(
            tmp_path, mode, "synth.generate_queries", llm, "synth_cache=''", "corpus_path=corpus.jsonl",
            "n_per_kind={grounded: 0, off_topic: 1, jailbreak: 1}", "dataset_dir=output/synth/risk",
        )  # fmt: skip
        assert stub.request_count == 10
    # 4 category lists and 3 technique lists, and the 3 rounds of the injected_passage host question
    refused_without_output(
        tmp_path,
        result,
        "generate_queries: 9 of 10 generations failed (90%, more than max_failed_fraction 0.1; "
        "raise max_failed_fraction to accept this) (error 9); first error: 403 from the endpoint",
    )
