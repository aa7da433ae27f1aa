"""A tool setting typed as a whole number written as one ``${VAR}`` (``top_k: ${TOP_K}``, as a pipeline run from CI
writes it) is read as the number its variable holds, in ``ultra run`` (in process and ``--stdio``) and ``ultra call``
(both ways): the same results as the literal number. A variable holding anything else is refused naming the file, the
line and ``${TOP_K}``, never the value, at ``ultra build`` and before ``ultra run``'s first step. A setting typed as
text (``run_tag: ${TAG}`` holding digits) keeps the text. Real CLI subprocesses on the retrieval example."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.hostile.conftest import clear_error
from tests.support.together import at_once

PIPELINE = "examples/sweep_retrieval_pipeline.yaml"
PARAMETERS = "examples/parameters/sweep_retrieval_pipeline_parameter.yaml"
TOP_K_LINE = 36  # of the example's parameter file
INDEX = "output/index/sweep_retrieval"


def project(tmp_path: Path, top_k: str, run_tag: str) -> Path:
    """The retrieval example in ``tmp_path`` (its data, its pipeline, its parameter file with ``top_k`` and
    ``run_tag`` written as given); the pipeline's path."""
    shutil.copytree(ROOT / "data" / "rag", tmp_path / "data" / "rag", dirs_exist_ok=True)
    pipeline = tmp_path / "retrieval.yaml"
    shutil.copyfile(ROOT / PIPELINE, pipeline)
    text = (ROOT / PARAMETERS).read_text(encoding="utf-8")
    assert text.splitlines()[TOP_K_LINE - 1] == "  top_k: 10"
    text = text.replace("  top_k: 10\n", f"  top_k: {top_k}\n").replace("  run_tag: ultra\n", f"  run_tag: {run_tag}\n")
    (tmp_path / "parameters").mkdir(exist_ok=True)
    (tmp_path / "parameters" / "retrieval_parameter.yaml").write_text(text, encoding="utf-8")
    return pipeline


def run_files(folder: Path) -> dict[str, str]:
    """The TREC run and the scores of the one run in ``folder/output`` (by kind: their names hold a time)."""
    (run,) = [p for p in (folder / "output").iterdir() if p.name.startswith("retrieval_")]
    files = {p.name.split("_2")[0]: p.read_text(encoding="utf-8") for p in (run / "files").iterdir()}
    assert set(files) == {"retriever_search", "evaluate_trec"}, files
    return files


def called_run(folder: Path, *arguments: str, env: dict[str, str], stdio: bool) -> list[str]:
    """The lines of the TREC run ``ultra call retriever.retriever_search`` writes for two questions."""
    call = ["call", *(["--stdio"] if stdio else []), "retriever.retriever_search", "q_ls=[cloud storage, billing]",
            "id_ls=[q1, q2]", f"index_path={INDEX}", *arguments]  # fmt: skip
    done = run_ultra(*call, cwd=folder, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    (path,) = [line.split('"')[3] for line in done.stdout.splitlines() if '"run_path"' in line]
    return Path(path).read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("stdio", [False, True])
def test_top_k_written_as_a_variable_gives_the_results_of_the_number(tmp_path: Path, stdio: bool) -> None:
    env = {"TOP_K": "3", "TAG": "0042"}  # a run_tag is text: 0042 stays 0042
    way = ["--stdio"] if stdio else []
    literal, variable = tmp_path / "literal", tmp_path / "variable"
    settings = {literal: ("3", "'0042'"), variable: ("${TOP_K}", "${TAG}")}

    def build_run_call(folder: Path) -> tuple[dict[str, str], list[str]]:
        """Build, run and call in ``folder`` one after another (each folder's project is its own: both go at once)."""
        top_k, tag = settings[folder]
        pipeline = project(folder, top_k, tag)
        assert run_ultra("build", str(pipeline), cwd=folder, env=env).returncode == 0
        done = run_ultra("run", str(pipeline), *way, cwd=folder, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        return run_files(folder), called_run(folder, f"top_k={top_k}", f"run_tag={tag}", env=env, stdio=stdio)

    outcome = at_once({folder: lambda folder=folder: build_run_call(folder) for folder in (literal, variable)})
    results = {folder: files for folder, (files, _) in outcome.items()}
    assert results[variable]["retriever_search"] == results[literal]["retriever_search"]
    scores = [json.loads(results[folder]["evaluate_trec"])["aggregate"] for folder in (variable, literal)]
    assert scores[0] == scores[1] and scores[0]["P@3"] > 0
    trec = results[variable]["retriever_search"].splitlines()
    assert trec and {line.split()[-1] for line in trec} == {"0042"}
    assert max(Counter(line.split()[0] for line in trec).values()) == 3  # at most 3 passages a question (top_k)
    called = outcome[variable][1]  # top_k=${TOP_K} run_tag=${TAG}
    assert called == outcome[literal][1]  # top_k=3 run_tag='0042'
    assert max(Counter(line.split()[0] for line in called).values()) == 3 and {line.split()[-1] for line in called} == {
        "0042"
    }


@pytest.mark.parametrize("value", ["3.5", "three", "3.0", "true"])
def test_a_top_k_holding_no_whole_number_is_refused_by_name_before_the_first_step(tmp_path: Path, value: str) -> None:
    """Build, run and call each in a project of its own (a run makes, then removes, a run folder named by the
    second), all at once."""
    said = "top_k ${TOP_K} must hold a whole number; it holds something else (not shown)"
    commands = {
        "build": ["build", "PIPELINE"],
        "run": ["run", "PIPELINE"],
        "call": ["call", "retriever.retriever_search", "q_ls=[cloud]", "id_ls=[q1]", "top_k=${TOP_K}"],
        "run --stdio": ["run", "PIPELINE", "--stdio"],
        "call --stdio": ["call", "--stdio", "retriever.retriever_search", "q_ls=[cloud]", "id_ls=[q1]",
                         "top_k=${TOP_K}"],
    }  # fmt: skip
    folders = {name: tmp_path / name.replace(" --", "_") for name in commands}
    pipelines = {name: str(project(folder, "${TOP_K}", "ultra")) for name, folder in folders.items()}

    def expected(name: str) -> str:
        params = folders[name] / "parameters" / "retrieval_parameter.yaml"
        return f"retriever.top_k: {params}:{TOP_K_LINE}: {said}"

    def command(name: str):
        arguments = [pipelines[name] if a == "PIPELINE" else a for a in commands[name]]
        timeout = 300 if arguments[0] == "run" else 120
        return lambda: run_ultra(*arguments, cwd=folders[name], env={"TOP_K": value}, timeout=timeout)

    done = at_once({name: command(name) for name in commands})
    clear_error(done["build"], expected("build"))
    for way in ("", " --stdio"):
        clear_error(done["run" + way], expected("run" + way))
        assert "[ultra] benchmark.get_data" not in done["run" + way].stderr  # no step ran
        clear_error(done["call" + way], f"Error executing tool retriever_search: {said}")
    texts = [text for result in done.values() for text in (result.stdout, result.stderr)]
    assert not any(value in text for text in texts), texts
    for folder in folders.values():
        assert not any(p.name.startswith("retrieval_") for p in (folder / "output").glob("*"))
