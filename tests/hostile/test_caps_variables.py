"""A limit written ``${VAR}`` (``max_workers: ${WORKERS}``) is read as the whole number its variable holds, at
``ultra build``, before ``ultra run``'s first step, under ``--estimate`` and inside the tool (``ultra call``, in
process and over MCP), and named by its reference everywhere, never by its value: in the messages, the logs and the
result files (``"max_workers": "${W}"``). A variable holding anything else is refused by name at file:line. A pool's
``max_workers``, its endpoints' ``max_concurrency`` summed, is checked before the first step too, naming what the
user wrote. Real CLI subprocesses against a local OpenAI stub."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import run_ultra
from tests.hostile.conftest import clear_error
from tests.hostile.test_caps_before_run import DEAD, LINE, WORKERS, project
from tests.support.openai_stub import OpenAIStub
from tests.support.together import at_once

VALUE = "1013"  # within caps.max_workers = 1,024 of the judge server, and long enough to be a secret (4 characters)
NOT_SHOWN = "it holds something else (not shown)"
FIX = "Use a smaller value, or raise the cap in servers/judge/parameter.yaml"


def files_of(folder: Path) -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8", errors="replace") for path in folder.rglob("*") if path.is_file()}


def absent(value: str, *texts: str) -> None:
    """``value`` (a number's text) is in none of ``texts``, nor written with commas (``1,013``), as a number of its
    own: not inside a longer run of digits, such as a run folder's time (``..._071932`` holds ``7193``)."""
    shown = {value, f"{int(value):,}"} if int(value) >= 1000 else {value}
    for text in texts:
        assert not any(re.search(rf"(?<!\d){re.escape(form)}(?!\d)", text) for form in shown), text


@pytest.mark.parametrize("stdio", [False, True])
def test_a_limit_written_as_a_variable_builds_and_runs_as_its_number_never_shown(tmp_path: Path, stdio: bool) -> None:
    env = {"W": VALUE, "R": "2"}
    with OpenAIStub() as stub:
        pipeline, params = project(tmp_path, stub.base_url, max_workers="${W}", max_retries="${R}")
        built = run_ultra("build", str(pipeline), cwd=tmp_path, env=env)
        assert built.returncode == 0, built.stderr
        assert "max_workers: ${W}\n" in params.read_text(encoding="utf-8")  # kept as written
        ran = at_once({  # the estimate sends and writes nothing: it goes beside the run
            "estimated": lambda: run_ultra("run", str(pipeline), "--estimate", cwd=tmp_path, env=env, timeout=300),
            "done": lambda: run_ultra("run", str(pipeline), *(["--stdio"] if stdio else []), cwd=tmp_path, env=env,
                                      timeout=300),
        })  # fmt: skip
        estimated, done = ran["estimated"], ran["done"]
        assert estimated.returncode == 0, estimated.stderr
        assert done.returncode == 0, done.stderr
        assert stub.request_count == 18  # one passage of each of the 18 queries judged
    (folder,) = [p for p in (tmp_path / "output").iterdir() if p.name.startswith("judge_")]
    files = files_of(folder)
    judged = [text for path, text in files.items() if path.name.startswith("umbrela_judge_") and path.suffix == ".json"]
    recorded = json.loads(judged[0])["settings"]["judge_llm"]  # the result is whole JSON, the count named
    assert (recorded["max_workers"], recorded["max_retries"]) == ("${W}", "${R}")
    absent(VALUE, built.stdout, built.stderr, estimated.stdout, estimated.stderr, done.stdout, done.stderr,
           *files.values())  # fmt: skip
    assert any(path.parent.name == "logs" for path in files)  # the logs were read too


NOT_WHOLE = ["1.5", "true", "eight-workers", "sk-not-a-count-93f1"]


@pytest.mark.parametrize("value", NOT_WHOLE)
def test_a_variable_holding_no_whole_number_is_refused_by_name_at_file_and_line(tmp_path: Path, value: str) -> None:
    """``ultra build`` and ``ultra run``, each in a project of its own, at once."""
    projects = {command: project(tmp_path / command, max_workers="${W}") for command in ("build", "run")}

    def expected(command: str) -> str:
        return f"judge.judge_llm: {projects[command][1]}:{LINE['max_workers']}: judge_llm.max_workers ${{W}} must " \
               f"hold a whole number >= 1; {NOT_SHOWN}"  # fmt: skip

    ran = at_once({command: lambda command=command: run_ultra(command, str(projects[command][0]),
                                                              cwd=tmp_path / command, env={"W": value})
                   for command in projects})  # fmt: skip
    built, done = ran["build"], ran["run"]
    clear_error(built, expected("build"))
    clear_error(done, expected("run"))
    assert "[ultra] evaluation.evaluate_trec" not in done.stderr
    assert not (tmp_path / "build" / "output").exists() and not (tmp_path / "run" / "output").exists()
    for text in (built.stdout, built.stderr, done.stdout, done.stderr):
        assert value not in text, text


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("max_workers", "2000", f"judge_llm.max_workers ${{W}} is more than the cap caps.max_workers = {WORKERS:,} of "
                                f"the judge server; it multiplies the work of the call. {FIX}"),
        ("max_workers", "0000", "judge_llm.max_workers must be >= 1, got ${W}"),
        ("max_retries", "-7193", "judge_llm.max_retries must be >= 0, got ${W}"),
    ],
)  # fmt: skip
def test_a_variables_number_beyond_its_range_is_refused_by_name(tmp_path: Path, key: str, value: str, message: str):
    """``ultra build`` and ``ultra run``, each in a project of its own, at once."""
    projects = {command: project(tmp_path / command, **{key: "${W}"}) for command in ("build", "run")}
    ran = at_once({command: lambda command=command: run_ultra(command, str(projects[command][0]),
                                                              cwd=tmp_path / command, env={"W": value})
                   for command in projects})  # fmt: skip
    for command, done in ran.items():
        clear_error(done, f"judge.judge_llm: {projects[command][1]}:{LINE[key]}: {message}")
        absent(value.lstrip("-"), done.stdout, done.stderr)  # nor -7,193 nor 0000
        assert not (tmp_path / command / "output").exists()


def test_an_unset_variable_is_left_to_the_step(tmp_path: Path) -> None:
    """``ultra build`` needs no environment: the step reads the variable (and names it if it is not set)."""
    pipeline, _ = project(tmp_path, max_workers="${W}")
    built = run_ultra("build", str(pipeline), cwd=tmp_path, unset=("W",))
    assert built.returncode == 0, built.stderr


@pytest.mark.parametrize(("literal", "shown"), [('"3"', "'3'"), ("true", "true")])
def test_a_literal_string_or_boolean_stays_refused(tmp_path: Path, literal: str, shown: str) -> None:
    """Written in the file, ``"3"`` and ``true`` are not counts (no variable stands behind them)."""
    pipeline, params = project(tmp_path, max_workers=literal)
    done = run_ultra("build", str(pipeline), cwd=tmp_path)
    clear_error(done, f"{params}:{LINE['max_workers']}: judge_llm.max_workers must be a whole number >= 1, got {shown}")


@pytest.mark.parametrize("stdio", [False, True])
def test_inside_the_tool_a_variables_count_is_read_and_named(tmp_path: Path, stdio: bool) -> None:
    """``ultra call`` gives ``${W}`` to the tool, which reads it (over MCP too: a count is sent to no host)."""
    with OpenAIStub() as stub:
        project(tmp_path, stub.base_url)
        llm = json.dumps({"api_key": "", "base_url": stub.base_url, "max_workers": "${W}"})
        arguments = ["judge.umbrela_judge", f"judge_llm={llm}", "judge_cache=", "depth=1", "save_path=output/judged",
                     "queries_path=data/umbrela/queries.jsonl", "run_path=data/umbrela/run.bm25.trec",
                     "corpus_path=data/umbrela/corpus.jsonl"]  # fmt: skip
        stdio_flag = ["--stdio"] if stdio else []
        project(tmp_path / "over", stub.base_url)  # the refused call in a project of its own: both calls at once
        calls = at_once({
            "over": lambda: run_ultra("call", *stdio_flag, *arguments, cwd=tmp_path / "over", env={"W": "2000"}),
            "done": lambda: run_ultra("call", *stdio_flag, *arguments, cwd=tmp_path, env={"W": VALUE}, timeout=300),
        })  # fmt: skip
        over, done = calls["over"], calls["done"]
        clear_error(over, f"judge_llm.max_workers ${{W}} is more than the cap caps.max_workers = {WORKERS:,}")
        absent("2000", over.stdout, over.stderr)
        assert done.returncode == 0, done.stderr
        assert stub.request_count == 18
    assert not (tmp_path / "over" / "output").exists()  # the refused call wrote nothing
    files = files_of(tmp_path / "output")
    (judged,) = [text for path, text in files.items() if path.suffix == ".json"]
    assert json.loads(judged)["settings"]["judge_llm"]["max_workers"] == "${W}"
    absent(VALUE, done.stdout, done.stderr, *files.values())


POOL = """\
    model_id: stub
    drain_after: 3
    cool_down: 1
    endpoints:
      - base_url: {url}
        max_concurrency: {first}
      - base_url: {url}
        max_concurrency: {second}
"""  # replaces the base_url line of test_caps_before_run.PARAMETERS: endpoints on line 17, the counts on 19 and 21


def pool_project(tmp_path: Path, first: str, second: str, url: str = DEAD) -> tuple[Path, Path]:
    pipeline, params = project(tmp_path, url)
    pool = POOL.format(url=url, first=first, second=second)
    params.write_text(params.read_text(encoding="utf-8").replace(f"    base_url: {url}\n", pool), encoding="utf-8")
    return pipeline, params


def test_a_pools_sum_beyond_the_cap_is_refused_before_the_first_step_naming_its_endpoints(tmp_path: Path) -> None:
    """``ultra build`` and ``ultra run``, each in a project of its own, at once."""
    projects = {command: pool_project(tmp_path / command, "600", "600") for command in ("build", "run")}

    def expected(command: str) -> str:
        return (f"judge.judge_llm: {projects[command][1]}:17: judge_llm.endpoints' max_concurrency 600 (line 19) "
                f"+ 600 (line 21) = 1,200 is more than the cap caps.max_workers = {WORKERS:,} of the judge "
                "server")  # fmt: skip

    ran = at_once({command: lambda command=command: run_ultra(command, str(projects[command][0]),
                                                              cwd=tmp_path / command)
                   for command in projects})  # fmt: skip
    clear_error(ran["build"], expected("build"))
    done = ran["run"]
    clear_error(done, expected("run"))
    assert "[ultra] evaluation.evaluate_trec" not in done.stderr and not (tmp_path / "run" / "output").exists()
    assert "judge_llm.max_workers" not in done.stderr  # a key the user never wrote


def test_a_pools_variable_count_is_named_not_shown(tmp_path: Path) -> None:
    pipeline, params = pool_project(tmp_path, "${C}", "600")
    done = run_ultra("build", str(pipeline), cwd=tmp_path, env={"C": "1001"})
    clear_error(done, f"judge.judge_llm: {params}:17: judge_llm.endpoints' max_concurrency ${{C}} (line 19) + 600 "
                      f"(line 21) together is more than the cap caps.max_workers = {WORKERS:,}")  # fmt: skip
    absent("1001", done.stdout, done.stderr)
    absent("1601", done.stderr)  # nor the sum


def test_a_pool_at_the_cap_builds_and_runs(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        pipeline, _ = pool_project(tmp_path, "${C}", str(WORKERS - 24), url=stub.base_url)
        built = run_ultra("build", str(pipeline), cwd=tmp_path, env={"C": "24"})
        assert built.returncode == 0, built.stderr
        done = run_ultra("run", str(pipeline), cwd=tmp_path, env={"C": "24"}, timeout=300)
        assert done.returncode == 0, done.stderr
        assert stub.request_count == 18
    (judged,) = (tmp_path / "output" / "judged").glob("*.json")
    recorded = json.loads(judged.read_text(encoding="utf-8"))["settings"]["judge_llm"]
    assert recorded["max_workers"] == f"${{C}} + {WORKERS - 24}"  # the sum would tell the variable's value
    assert [e["max_concurrency"] for e in recorded["endpoints"]] == ["${C}", WORKERS - 24]


def test_inside_the_tool_a_pool_is_refused_naming_its_endpoints(tmp_path: Path) -> None:
    project(tmp_path)
    endpoints = [{"base_url": DEAD, "max_concurrency": 600}, {"base_url": DEAD, "max_concurrency": 600}]
    llm = json.dumps({"api_key": "", "model_id": "m", "drain_after": 3, "cool_down": 1, "endpoints": endpoints})
    done = run_ultra("call", "judge.umbrela_judge", f"judge_llm={llm}", "judge_cache=", cwd=tmp_path)
    clear_error(done, "judge_llm.endpoints' max_concurrency 600 + 600 = 1,200 is more than the cap caps.max_workers")


JURY = """\
    jury:
      - model_id: a
        base_url: {url}
        max_workers: ${{W}}
      - model_id: b
        base_url: {url}
"""  # replaces the base_url line: jury on line 14 (the panel check names the key)


def test_a_jury_members_variable_count_is_read_at_build(tmp_path: Path) -> None:
    """Three builds, each in a project of its own (the one that passes rewrites its file), at once."""
    values = {"over": "2000", "summed": "1020", "built": "5"}  # summed: member b inherits max_workers 8
    projects = {name: project(tmp_path / name) for name in values}
    for _, params in projects.values():
        params.write_text(params.read_text(encoding="utf-8").replace(f"    base_url: {DEAD}\n", JURY.format(url=DEAD)),
                          encoding="utf-8")  # fmt: skip
    ran = at_once({name: lambda name=name: run_ultra("build", str(projects[name][0]), cwd=tmp_path / name,
                                                     env={"W": values[name]}) for name in values})  # fmt: skip
    over, summed, built = ran["over"], ran["summed"], ran["built"]
    clear_error(over, f"{projects['over'][1]}:14: judge_llm.jury[0].max_workers ${{W}} is more than the cap "
                      "caps.max_workers")  # fmt: skip
    absent("2000", over.stdout, over.stderr)
    clear_error(summed, "judge_llm.jury's max_workers (its members' sum) ${W} + 8 is more than the cap caps.max_")
    absent("1020", summed.stdout, summed.stderr)
    absent("1028", summed.stdout, summed.stderr)  # nor the sum
    assert built.returncode == 0, built.stderr
