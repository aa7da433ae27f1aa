"""An LLM mapping's ``max_retries`` / ``max_workers`` in a pipeline's parameter file is checked against the server's
caps by ``ultra build`` and before ``ultra run``'s first step, with the message the step would give, at the parameter
file's line: a pipeline whose second step is the judge no longer runs its first step (and writes its result) only to
be refused at the judge. Real CLI subprocesses; the valid edge (a value equal to its cap) builds and runs against a
local OpenAI stub."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import clear_error
from tests.hostile.test_caps import caps
from tests.support.background import Command, Finished, Prepare, in_background
from tests.support.openai_stub import OpenAIStub
from tests.support.together import at_once
from ultra_client.calls.server_pool import locate_server
from ultra_client.errors import UltraError
from ultra_client.pipeline.setting_checks import check_setting_values
from ultra_kit.llm_mapping import LIMIT_MINIMUMS, capped_settings
from ultra_kit.settings import SERVERS_DIR

DEAD = "http://127.0.0.1:9/v1"  # nothing listens: a request sent would fail, not hang
DATA = ("trec/results.test", "trec/qrels.test", "umbrela/queries.jsonl", "umbrela/run.bm25.trec",
        "umbrela/corpus.jsonl")  # fmt: skip
PIPELINE = """\
servers:
  evaluation: servers/evaluation
  judge: servers/judge
pipeline:
  - evaluation.evaluate_trec             # writes output/evaluated/evaluate_trec_<time>.json
  - judge.umbrela_judge
"""
PARAMETERS = """\
evaluation:
  run_path: data/trec/results.test
  qrels_path: data/trec/qrels.test
  save_path: output/evaluated
judge:
  queries_path: data/umbrela/queries.jsonl
  run_path: data/umbrela/run.bm25.trec
  corpus_path: data/umbrela/corpus.jsonl
  depth: 1
  judge_cache: ''
  save_path: output/judged
  judge_llm:
    api_key: ''
    base_url: {base_url}
    max_retries: {max_retries}
    max_workers: {max_workers}
"""
LINE = {"max_retries": 15, "max_workers": 16}  # of each key in PARAMETERS
WORKERS, RETRIES = caps("judge")["max_workers"], caps("judge")["max_retries"]
FIX = "Use a smaller value, or raise the cap in servers/judge/parameter.yaml"
BAD = [
    ("max_workers", "1000000000", f"judge_llm.max_workers 1,000,000,000 is more than the cap caps.max_workers = "
                                  f"{WORKERS:,} of the judge server; it multiplies the work of the call. {FIX}"),
    ("max_retries", str(RETRIES + 1), f"judge_llm.max_retries {RETRIES + 1} is more than the cap caps.max_retries = "
                                      f"{RETRIES} of the judge server"),
    ("max_workers", "0", "judge_llm.max_workers must be >= 1, got 0"),
    ("max_workers", "1.5", "judge_llm.max_workers must be a whole number >= 1, got 1.5"),
    ("max_retries", "-1", "judge_llm.max_retries must be >= 0, got -1"),
]  # fmt: skip


def project(tmp_path: Path, base_url: str = DEAD, **limits: str) -> tuple[Path, Path]:
    """A project in ``tmp_path`` (the data its steps read, ``pipes/judge.yaml``) and its parameter file."""
    for name in DATA:
        (tmp_path / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "data" / name, tmp_path / "data" / name)
    (tmp_path / "pipes" / "parameters").mkdir(parents=True)
    (tmp_path / "pipes" / "judge.yaml").write_text(PIPELINE, encoding="utf-8")
    params = tmp_path / "pipes" / "parameters" / "judge_parameter.yaml"
    values = {"max_retries": "3", "max_workers": "8", **limits}
    params.write_text(PARAMETERS.format(base_url=base_url, **values), encoding="utf-8")
    return tmp_path / "pipes" / "judge.yaml", params


def refused_command(command: str, key: str, value: str) -> Prepare:
    """``ultra COMMAND`` of the project with ``key: value`` in ``folder``: a spare background run."""

    def prepare(folder: Path) -> Command:
        pipeline, _ = project(folder, **{key: value})
        return Command((command, str(pipeline)), timeout=120, cwd=folder)

    return prepare


def spare_cases(command: str, cases: list[tuple[str, str, str]]) -> list:
    return [pytest.param(*case, marks=in_background(refused_command(command, *case[:2]), spare=True)) for case in cases]


@pytest.mark.parametrize(("key", "value", "message"), spare_cases("build", BAD))
def test_ultra_build_refuses_a_limit_beyond_the_cap_at_file_and_line(background_run: Finished, key, value, message):
    done, folder = background_run.done, background_run.folder
    params = folder / "pipes" / "parameters" / "judge_parameter.yaml"
    clear_error(done, f"judge.judge_llm: {params}:{LINE[key]}: {message}")
    before = PARAMETERS.format(base_url=DEAD, **{"max_retries": "3", "max_workers": "8", key: value})  # as written
    assert params.read_text(encoding="utf-8") == before  # not rewritten


@pytest.mark.parametrize(("key", "value", "message"), spare_cases("run", BAD[:3]))
def test_ultra_run_refuses_it_before_the_first_step(background_run: Finished, key, value, message) -> None:
    done, folder = background_run.done, background_run.folder
    params = folder / "pipes" / "parameters" / "judge_parameter.yaml"
    clear_error(done, f"judge.judge_llm: {params}:{LINE[key]}: {message}")
    assert "[ultra] evaluation.evaluate_trec" not in done.stderr  # the first step never started ...
    assert not (folder / "output").exists()  # ... so it wrote no result, and the run folder was removed


def test_the_message_is_the_one_the_step_gives(tmp_path: Path) -> None:
    """``ultra call`` runs the tool: its refusal is the text ``ultra build`` gives after file:line."""
    pipeline, params = project(tmp_path, max_workers="1000000000")
    llm = json.dumps({"api_key": "", "base_url": DEAD, "max_workers": 1_000_000_000})
    ran = at_once(
        {  # both refused, writing nothing: at once
            "called": lambda: run_ultra(
                "call", "judge.umbrela_judge", f"judge_llm={llm}", "judge_cache=", cwd=tmp_path
            ),
            "built": lambda: run_ultra("build", str(pipeline), cwd=tmp_path),
        }
    )
    called, built = ran["called"], ran["built"]
    clear_error(called)
    step = called.stderr.split("judge_llm.max_workers", 1)[1].strip()
    clear_error(built, f"judge.judge_llm: {params}:{LINE['max_workers']}: judge_llm.max_workers {step}")


def test_values_equal_to_the_caps_build_and_run(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        pipeline, params = project(tmp_path, stub.base_url, max_workers=str(WORKERS), max_retries=str(RETRIES))
        built = run_ultra("build", str(pipeline), cwd=tmp_path)
        assert built.returncode == 0, built.stderr
        assert f"max_workers: {WORKERS}\n" in params.read_text(encoding="utf-8")
        done = run_ultra("run", str(pipeline), cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr
        assert stub.request_count == 18  # one passage of each of the 18 queries judged
    assert len(list((tmp_path / "output" / "evaluated").glob("evaluate_trec_*.json"))) == 1


SHIPPED = [(path.parent.name, setting) for path in sorted(SERVERS_DIR.glob("*/parameter.yaml"))
           for setting in capped_settings(path.parent.name)]  # fmt: skip


def test_every_llm_mapping_and_limit_mapping_is_found_from_the_parameter_files() -> None:
    assert SHIPPED == [("evaluation", "similarity_embeddings"), ("generation", "generation_llm"),
                       ("judge", "judge_llm"), ("retriever", "dense"), ("synth", "synth_llm"),
                       ("target", "target")]  # fmt: skip


@pytest.mark.parametrize(("server", "setting"), SHIPPED)
@pytest.mark.parametrize("name", list(LIMIT_MINIMUMS))
def test_each_servers_limit_is_checked_before_a_step(tmp_path: Path, server: str, setting: str, name: str) -> None:
    """The pre-flight check (``ultra build``, ``ultra run``, ``--estimate``) of each shipped server's capped mapping."""
    limit = caps(server)[name]
    params = tmp_path / "params.yaml"
    params.write_text(f"mine:\n  {setting}:\n    {name}: {limit + 1}\n", encoding="utf-8")
    location = locate_server("mine", f"servers/{server}", [ROOT])
    with pytest.raises(UltraError) as refused:
        check_setting_values({"mine": SimpleNamespace(location=location, spec=None)}, params)
    assert str(refused.value) == (
        f"mine.{setting}: {params}:3: {setting}.{name} {limit + 1:,} is more than the cap caps.{name} = {limit:,} of "
        f"the {server} server; it multiplies the work of the call. Use a smaller value, or raise the cap in "
        f"servers/{server}/parameter.yaml"
    )
    params.write_text(f"mine:\n  {setting}:\n    {name}: {limit}\n", encoding="utf-8")
    check_setting_values({"mine": SimpleNamespace(location=location, spec=None)}, params)  # the cap itself passes


def test_ultra_sweep_refuses_a_swept_value_beyond_the_cap_before_the_first_trial(tmp_path: Path) -> None:
    pipeline, _ = project(tmp_path)
    done = run_ultra("sweep", str(pipeline), "--output-dir", "output/sweep", "--grid",
                     f"judge.judge_llm.max_workers=[8,{WORKERS + 1}]", cwd=tmp_path)  # fmt: skip
    clear_error(done, f"--grid judge.judge_llm.max_workers: judge.judge_llm: judge_llm.max_workers {WORKERS + 1:,} is "
                      f"more than the cap caps.max_workers = {WORKERS:,} of the judge server")  # fmt: skip
    assert "trial 1" not in done.stderr and not (tmp_path / "output" / "evaluated").exists()


def test_ultra_sweep_refuses_its_parameter_files_value_before_the_first_trial(tmp_path: Path) -> None:
    pipeline, params = project(tmp_path, max_retries=str(RETRIES + 1))
    done = run_ultra("sweep", str(pipeline), "--output-dir", "output/sweep", "--grid",
                     "judge.depth=[1,2]", cwd=tmp_path)  # fmt: skip
    clear_error(done, f"judge.judge_llm: {params}:{LINE['max_retries']}: judge_llm.max_retries {RETRIES + 1} is more")
    assert "trial 1" not in done.stderr and not (tmp_path / "output" / "evaluated").exists()
