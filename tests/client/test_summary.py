"""The table at the end of ``ultra run``: every scalar result, renamed variables and mapping rows included."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, in_background
from tests.support.openai_stub import OpenAIStub, content_of
from tests.support.summary_check import assert_fits
from ultra_client.summary.lines import MAX_ROWS, summary_lines


def cell(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def test_table_of_numbers_mapping_rows_and_report() -> None:
    memory = {
        "q_ls": ["a", "b"],  # per-item lists: one line
        "num_q": 2,
        "scores": {"avg_em": 0.5, "em": [1.0, 0.0], "n": 2, "flag": True, "sub": {"x": 1 / 3}},
        "rows": {"map": {"metric": "map", "A": 0.25, "sig": False}, "P@5": {"metric": "P@5", "A": 1.0, "sig": True}},
    }
    assert summary_lines(memory, "/r/report.html") == [
        "variable  result   value",
        "------------------------",
        "num_q                  2",
        "scores    avg_em  0.5000",
        "          n            2",
        "          sub.x   0.3333",
        "",
        "q_ls: 2 items: a, b",
        "",
        "rows       A  sig",  # the 'metric' column only repeats the row's key
        "-----------------",
        "map   0.2500  no",
        "P@5   1.0000  yes",
        "",
        "report: /r/report.html",
    ]


def test_long_mappings_are_cut_saying_so() -> None:
    lines = summary_lines({"per_query": {f"q{i}": float(i) for i in range(MAX_ROWS + 5)}})
    assert len(lines) == 2 + MAX_ROWS + 1 and lines[-1] == "(per_query: 5 more rows in the run folder's memory.json)"


def table(stdout: str) -> str:
    return stdout.split("done: ")[0]


def run_example(name: str, tmp_path: Path, *extra: str) -> tuple[str, dict]:
    done = run_ultra("run", f"examples/{name}.yaml", "--output-dir", str(tmp_path), *extra, cwd=ROOT, timeout=240)
    return example_end(done, tmp_path, *extra)


def example_end(done: subprocess.CompletedProcess, output: Path, *extra: str) -> tuple[str, dict]:
    """The table and the memory of a finished ``ultra run ... --output-dir OUTPUT EXTRA``."""
    assert done.returncode == 0, done.stderr[-3000:]
    (folder,) = [p for p in output.iterdir() if p.is_dir()]
    if "--full" not in extra:
        assert_fits(done.stdout)
    return table(done.stdout), json.loads((folder / "memory.json").read_text())


def mtrag_run(folder: Path) -> Command:
    """examples/mtrag.yaml (BERTScore's model loads in it: about 10 s), started beside the suite."""
    return Command(("run", "examples/mtrag.yaml", "--output-dir", str(folder / "out")), timeout=600)


def row(text: str, *cells: str, variable: str = "") -> None:
    """A line of ``text`` holds the cells in order, separated by aligning spaces (after ``variable``,
    which the table prints on a variable's first row only)."""
    first = f"({re.escape(variable)})?" if variable else ""
    pattern = r"^" + first + r"\s*" + r"\s+".join(re.escape(c) for c in cells) + r"\s*$"
    assert re.search(pattern, text, re.MULTILINE), f"no row {cells} in\n{text}"


@pytest.mark.parametrize("name", ["eval_trec", "load_data", "evaluate_results", "sweep_retrieval_pipeline"])
def test_terminal_table_of_the_examples(name: str, tmp_path: Path) -> None:
    check_table(name, *run_example(name, tmp_path))


@in_background(mtrag_run)
def test_terminal_table_of_the_mtrag_example(background_run: Finished) -> None:
    check_table("mtrag", *example_end(background_run.done, background_run.folder / "out"))


def check_table(name: str, text: str, memory: dict) -> None:
    info = memory.get("data_info")
    if info:  # the loader's counts
        row(text, "data_info", "total_rows", str(info["total_rows"]))
        row(text, "kept_rows", str(info["kept_rows"]))
        row(text, "dropped_rows", str(info["dropped_rows"]))
    for key, value in memory.get("eval_res", {}).items():
        if isinstance(value, float):
            row(text, key, f"{value:.4f}", variable="eval_res")
    if name == "eval_trec":
        row(text, "counts", "num_q", str(memory["counts"]["num_q"]))
        row(text, "num_rel_ret", str(memory["counts"]["num_rel_ret"]))
    assert "[" not in text  # no per-item list
    assert re.search(r"^from \w+\.\w+:$", text, re.M), text  # the rows under the step that produced them


def test_terminal_table_of_p_value_rows(tmp_path: Path) -> None:
    text, memory = run_example("eval_trec_pvalue", tmp_path)
    row(text, "num_q", str(memory["num_q"]))
    header = next(line for line in text.splitlines() if line.startswith("eval_res "))
    columns = header.split()[1:]
    assert columns[:3] == ["A_mean", "B_mean", "diff"] and "p_value" in columns and "significant" in columns
    # the run column holds one value: said once under the table, not in every row
    assert re.search(r"^ ?run = data/trec/results\.perturbed in every row;", text, re.M), text
    for measure, values in memory["eval_res"].items():
        shown = [values[c] for c in columns]
        cells = [
            f"{v:.4f}" if isinstance(v, float) else ("yes" if v else "no") if isinstance(v, bool) else str(v)
            for v in shown
        ]
        row(text, measure, *cells)
    # `table` holds the same rows as a list: said in one line, not printed a second time
    assert len(memory["table"]) == len(memory["eval_res"]) and not re.search(r"^table ", text, re.M)
    assert "table: the same rows as eval_res (from evaluation.evaluate_trec_pvalue)" in text


def test_a_table_with_other_values_is_not_taken_for_a_repeat() -> None:
    rows = {"map": {"A_mean": 0.1, "B_mean": 0.2}, "mrr": {"A_mean": 0.3, "B_mean": 0.4}}
    same = [{"metric": "map", "A_mean": 0.1, "B_mean": 0.2}, {"metric": "mrr", "A_mean": 0.3, "B_mean": 0.4}]
    other = [{"metric": "map", "A_mean": 0.1, "B_mean": 0.2}, {"metric": "mrr", "A_mean": 0.3, "B_mean": 0.5}]
    producers = dict.fromkeys(("eval_res", "table"), "s.t")
    text = "\n".join(summary_lines({"eval_res": rows, "table": same}, producers=producers))
    assert "table: the same rows as eval_res" in text
    text = "\n".join(summary_lines({"eval_res": rows, "table": other}, producers=producers))
    assert "same rows" not in text and re.search(r"^table ", text, re.M)


def test_terminal_table_of_rag_full_shows_renamed_results(tmp_path: Path) -> None:
    golden = {
        json.loads(line)["question"]: json.loads(line)["golden_answers"][0]
        for line in (ROOT / "data/rag/questions.jsonl").read_text().splitlines()
    }
    params = yaml.safe_load((ROOT / "examples/parameters/rag_full_parameter.yaml").read_text())
    params["benchmark"]["benchmark"]["limit"] = 3
    params["retriever"].update(index_path=str(tmp_path / "index"), save_path=str(tmp_path / "retriever"))
    params["evaluation"]["save_path"] = str(tmp_path / "evaluation")

    def answer(request: dict) -> str:
        return f"\\boxed{{{golden[content_of(request).rsplit('Question: ', 1)[1].strip()]}}}"

    with OpenAIStub(answer) as stub:
        llm = {"backend": "openai", "base_url": stub.base_url, "model_id": "stub", "api_key": "", "reasoning": False}
        params["generation"].update(save_path=str(tmp_path / "generation"), generation_cache="", generation_llm=llm)
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
        text, memory = run_example("rag_full", tmp_path / "runs", "--param", str(tmp_path / "params.yaml"))
    row(text, "answer_scores", "avg_em", "1.0000")  # eval_res renamed by the pipeline
    row(
        text,
        "retrieval_scores",
        next(iter(memory["retrieval_scores"])),
        f"{next(iter(memory['retrieval_scores'].values())):.4f}",
    )
    row(text, "data_info", "total_rows", str(memory["data_info"]["total_rows"]))
    row(text, "kept_rows", "3")


def test_the_table_ends_with_the_report_written(tmp_path: Path) -> None:
    shutil.copytree(
        Path(__file__).parent / "toy_spec_server", tmp_path / "toyspec", ignore=shutil.ignore_patterns("__pycache__")
    )
    (tmp_path / "p.yaml").write_text("servers:\n  toy: toyspec\npipeline:\n  - toy.make_items\n  - toy.write_report\n")
    done = run_ultra("run", "p.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (folder,) = [p for p in (tmp_path / "output").iterdir() if p.is_dir()]  # not the run index
    lines = table(done.stdout).rstrip("\n").splitlines()
    assert lines[-1] == f"report: {folder.relative_to(tmp_path)}/files/report.html"  # in the run folder
    assert "<p>three</p>" in (folder / "files" / "report.html").read_text()
    row("\n".join(lines), "scores", "one", "1.0000")
    row("\n".join(lines), "three", "1.6667")
