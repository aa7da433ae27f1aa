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
    results = {}
    for folder, top_k, tag in ((literal, "3", "'0042'"), (variable, "${TOP_K}", "${TAG}")):
        pipeline = project(folder, top_k, tag)
        assert run_ultra("build", str(pipeline), cwd=folder, env=env).returncode == 0
        done = run_ultra("run", str(pipeline), *way, cwd=folder, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        results[folder] = run_files(folder)
    assert results[variable]["retriever_search"] == results[literal]["retriever_search"]
    scores = [json.loads(results[folder]["evaluate_trec"])["aggregate"] for folder in (variable, literal)]
    assert scores[0] == scores[1] and scores[0]["P@3"] > 0
    trec = results[variable]["retriever_search"].splitlines()
    assert trec and {line.split()[-1] for line in trec} == {"0042"}
    assert max(Counter(line.split()[0] for line in trec).values()) == 3  # at most 3 passages a question (top_k)
    called = called_run(variable, "top_k=${TOP_K}", "run_tag=${TAG}", env=env, stdio=stdio)
    assert called == called_run(literal, "top_k=3", "run_tag='0042'", env=env, stdio=stdio)
    assert max(Counter(line.split()[0] for line in called).values()) == 3 and {line.split()[-1] for line in called} == {
        "0042"
    }


@pytest.mark.parametrize("value", ["3.5", "three", "3.0", "true"])
def test_a_top_k_holding_no_whole_number_is_refused_by_name_before_the_first_step(tmp_path: Path, value: str) -> None:
    pipeline = project(tmp_path, "${TOP_K}", "ultra")
    params = tmp_path / "parameters" / "retrieval_parameter.yaml"
    said = "top_k ${TOP_K} must hold a whole number; it holds something else (not shown)"
    expected = f"retriever.top_k: {params}:{TOP_K_LINE}: {said}"
    built = run_ultra("build", str(pipeline), cwd=tmp_path, env={"TOP_K": value})
    clear_error(built, expected)
    texts = [built.stdout, built.stderr]
    for way in ([], ["--stdio"]):
        done = run_ultra("run", str(pipeline), *way, cwd=tmp_path, env={"TOP_K": value}, timeout=300)
        clear_error(done, expected)
        assert "[ultra] benchmark.get_data" not in done.stderr  # no step ran
        texts += [done.stdout, done.stderr]
        call = run_ultra("call", *way, "retriever.retriever_search", "q_ls=[cloud]", "id_ls=[q1]", "top_k=${TOP_K}",
                         cwd=tmp_path, env={"TOP_K": value})  # fmt: skip
        clear_error(call, f"Error executing tool retriever_search: {said}")
        texts += [call.stdout, call.stderr]
    assert not any(value in text for text in texts), texts
    assert not any(p.name.startswith("retrieval_") for p in (tmp_path / "output").glob("*"))
