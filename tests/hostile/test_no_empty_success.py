"""No silent empty success, through the real CLI (in process and over MCP stdio): get_data that keeps no record,
and generate_queries whose LLM requests nearly all failed, fail with the reasons and write nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error
from tests.support.background import Command, Finished, in_background
from tests.support.openai_stub import OpenAIStub
from tests.synth.conftest import small_corpus

CANARY = "CANARY-5e1d9c"  # planted in fields no key_map names: never in a message
MODES = [pytest.param([], id="in-process"), pytest.param(["--stdio"], id="mcp-stdio")]


def call(project: Path, mode: list[str], *args: str, timeout: float = 120):
    """``ultra call`` run in ``project`` (the data lies inside it, a read root)."""
    return run_ultra("call", *mode, *args, cwd=project, env={"ULTRA_READ_ROOTS": str(project)}, timeout=timeout)


def spare_get_data(mode: list[str], files: dict[str, str], benchmark: str) -> pytest.MarkDecorator:
    """``call(folder, MODE, "benchmark.get_data", "benchmark=BENCHMARK")`` on ``files`` written in the run's folder:
    a spare background run (tests/support/background.py)."""

    def prepare(folder: Path) -> Command:
        for name, text in files.items():
            (folder / name).write_text(text)
        return Command(("call", *mode, "benchmark.get_data", f"benchmark={benchmark}"), timeout=120,
                       env={"ULTRA_READ_ROOTS": str(folder)}, cwd=folder)  # fmt: skip

    return in_background(prepare, spare=True)


def modes(files: dict[str, str], benchmark: str) -> list:
    """MODES, each a spare background run of get_data."""
    return [pytest.param(mode, marks=spare_get_data(mode, files, benchmark), id=name)
            for mode, name in (([], "in-process"), (["--stdio"], "mcp-stdio"))]  # fmt: skip


def refused_without_output(project: Path, result, *fragments: str) -> None:
    clear_error(result, *fragments)
    assert result.stdout.strip() == "" and CANARY not in result.stderr + result.stdout
    assert not (project / "output").exists()


ROWS = [
    f'{{"q": NaN, "a": ["x"], "note": "{CANARY}"}}',
    f'{{"q": "fine", "a": [NaN], "note": "{CANARY}"}}',
    f'{{"q": "no answer", "note": "{CANARY}"}}',
]


@pytest.mark.parametrize("mode", modes({"all_nan.jsonl": "\n".join(ROWS) + "\n"},
                                       "{path: all_nan.jsonl, key_map: {q_ls: q, gt_ls: a}}"))  # fmt: skip
def test_get_data_on_all_nan_jsonl_fails_with_the_drop_reasons(background_run: Finished, mode: list[str]) -> None:
    result = background_run.done
    refused_without_output(
        background_run.folder,
        result,
        "all_nan.jsonl: no record kept: read 3 records and dropped every one (",
        "NaN in field 'q': 1",
        "NaN in field 'a': 1",
        "missing or null field 'a': 1",
    )


@pytest.mark.parametrize("mode", modes({"all_nan.csv": f"question,answer,note\nNaN,x,{CANARY}\nnan,y,{CANARY}\n"},
                                       "{path: all_nan.csv, key_map: {q_ls: question}}"))  # fmt: skip
def test_get_data_on_all_nan_csv_fails_with_the_drop_reasons(background_run: Finished, mode: list[str]) -> None:
    result = background_run.done
    says = "all_nan.csv: no record kept: read 2 records and dropped every one (NaN in field 'question': 2)"
    refused_without_output(background_run.folder, result, says)


EMPTY = [
    ("empty.jsonl", "", "empty.jsonl: the file is empty (0 bytes): it holds no records"),
    ("empty.json", "", "empty.json: the file is empty (0 bytes): it holds no records"),
    ("header.csv", "question,answer\n", "header.csv: the dataset holds no records (read 0)"),
    ("blank.jsonl", "\n\n", "blank.jsonl: the dataset holds no records (read 0)"),
]


@pytest.mark.parametrize(("name", "text", "says"), [
    pytest.param(name, text, says,
                 marks=spare_get_data([], {name: text}, f"{{path: {name}, key_map: {{q_ls: question}}}}"))
    for name, text, says in EMPTY])  # fmt: skip
def test_get_data_on_an_empty_dataset_says_it_is_empty(background_run: Finished, name: str, text: str, says: str):
    result = background_run.done
    refused_without_output(background_run.folder, result, says)


@spare_get_data([], {"one.jsonl": '{"q": NaN}\n{"q": "kept"}\n'}, "{path: one.jsonl, key_map: {q_ls: q}}")
def test_get_data_keeping_one_record_still_succeeds(background_run: Finished) -> None:
    result = background_run.done
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
