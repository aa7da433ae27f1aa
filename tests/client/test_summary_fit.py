"""The end of a run fitted to 100 columns: matrices cut (shape, a few rows, where the rest is), lists of rows
as aligned tables, rows under the step that produced them, and ``ultra run --full`` printing everything."""

from __future__ import annotations

from pathlib import Path

from tests.client.test_summary import run_example
from ultra_client.summary.lines import summary_lines


def matrix(rows: int, columns: int) -> dict[str, dict[str, int | None]]:
    """qid -> {docid: grade}: each query graded only its own documents, like umbrela's ``scores``."""
    return {
        f"query-{q:02d}": {f"doc-{q:02d}-{d:03d}-with-a-long-passage-id": (q + d) % 4 for d in range(columns)}
        for q in range(rows)
    }


def test_a_query_by_document_matrix_is_cut_to_fit_and_says_where_the_rest_is() -> None:
    memory = {"scores": matrix(18, 8), "result_path": "output/judge/umbrela_1.json"}
    producers = {"scores": "judge.umbrela_judge", "result_path": "judge.umbrela_judge"}
    lines = summary_lines(memory, producers=producers)
    assert max(map(len, lines)) <= 100
    assert lines[0].startswith("scores  ")
    shown = lines[2:-3]  # header, rule ... note (3 lines at most)
    assert len([line for line in shown if line.startswith("doc-") or line.startswith("query-")]) <= 20
    note = " ".join(line.strip() for line in lines if line.startswith(("(", " ")))
    assert note.startswith("(scores: from judge.umbrela_judge; 18 rows x 144 columns")
    assert "shown" in note and note.endswith("all in output/judge/umbrela_1.json)")
    saved = {"output/judge/umbrela_1.json": "files/umbrela_1.json"}  # brought into the run folder
    lines = summary_lines(memory, producers=producers, saved=saved)
    assert " ".join(lines[-2:]).endswith("all in the run folder's files/umbrela_1.json)")
    full = summary_lines(memory, producers=producers, full=True)
    assert len(full) == 2 + 18 + 1 and max(map(len, full)) > 100  # every row and column, and the step
    assert full[2].split()[0] == "query-00" and len(full[2].split()) == 1 + 144


def test_a_list_of_rows_prints_as_an_aligned_table() -> None:
    rows = [
        {"category": "jailbreak", "n": 12, "refusal_rate": 0.75, "ci": [0.5, 0.9]},
        {"category": "off_topic", "n": 3, "refusal_rate": 1.0, "ci": [0.4, 1.0]},
    ]
    lines = summary_lines({"risk_table": rows}, producers={"risk_table": "synth.risk_table"})
    assert lines == [
        "risk_table  category    n  refusal_rate",
        "---------------------------------------",
        "1           jailbreak  12        0.7500",
        "2           off_topic   3        1.0000",
        "(risk_table: from synth.risk_table)",
    ]
    many = {"risk_table": rows * 15, "table_path": "output/risk/risk_table_1.json", "table_csv_path": "x.csv"}
    lines = summary_lines(many, producers=dict.fromkeys(many, "synth.risk_table"))
    assert len(lines) == 2 + 20 + 2  # the note takes 2 lines of 100 characters at most
    assert "".join(lines[-2:]) == (
        "(risk_table: from synth.risk_table; 30 rows x 3 columns; first 20 rows shown; "
        "all in output/risk/risk_table_1.json)"
    )


def test_each_row_names_the_step_that_produced_it() -> None:
    memory = {"counts": {"pairs": 180}, "failed": {"count": 0}, "usage": {"requests": 171}, "num_q": 3}
    producers = {"num_q": "evaluation.evaluate_trec", "counts": "judge.nuggetize", "failed": "judge.nuggetize"}
    producers["usage"] = "judge.nuggetize"
    assert summary_lines(memory, producers=producers) == [
        "variable  result    value",
        "-------------------------",
        "from evaluation.evaluate_trec:",
        "num_q                   3",
        "from judge.nuggetize:",
        "counts    pairs       180",
        "failed    count         0",
        "usage     requests    171",
    ]


def test_a_long_list_of_values_is_one_line_with_its_count() -> None:
    (line,) = summary_lines({"em": [1.0, 0.0] * 120}, producers={"em": "evaluation.evaluate"})
    assert line.startswith("em: 240 items: 1.0000, 0.0000, 1.0000") and line.endswith(" (evaluation.evaluate)")
    assert len(line) <= 100


def test_ultra_run_full_prints_every_column(tmp_path: Path) -> None:
    text, memory = run_example("eval_trec_pvalue", tmp_path, "--full")
    header = next(line for line in text.splitlines() if line.startswith("eval_res "))
    rows = memory["eval_res"]
    every = [key for key in next(iter(rows.values())) if any(row.get(key) != name for name, row in rows.items())]
    assert header.split()[1:] == every and "run" in every  # all but the column that repeats the row's name
    assert max(map(len, text.splitlines())) > 100


def test_a_long_note_breaks_between_its_parts_within_the_width() -> None:
    rows = [{"qid": f"q{i}", "status": "ok", "value": i / 7} for i in range(30)]
    lines = summary_lines({"idk_items": rows}, producers={"idk_items": "judge.idk_judge"}, width=60)
    note = lines[lines.index(next(line for line in lines if line.startswith("(idk_items"))) :]
    assert len(note) > 1 and all(len(line) <= 60 for line in note)
    assert "".join(note) == (
        "(idk_items: from judge.idk_judge; 30 rows x 3 columns; status = ok in every row; first 20 rows shown; "
        "all in the run folder's memory.json)"
    )  # a later line starts with the space that followed its ';'


# Which test runs each example with `ultra run` and checks its end (no line over 100 characters:
# tests.support.summary_check.check_summary, or run_example of tests/client/test_summary.py).
ENDS_CHECKED_BY = {
    "eval_trec": "tests/client/test_summary.py",
    "eval_trec_pvalue": "tests/client/test_summary.py",
    "load_data": "tests/client/test_summary.py",
    "evaluate_results": "tests/client/test_summary.py",
    "mtrag": "tests/client/test_summary.py",
    "rag_full": "tests/client/test_summary.py",
    "sweep_retrieval_pipeline": "tests/client/test_summary.py",
    "umbrela": "tests/judge/test_example.py",
    "nuggets": "tests/judge/test_nuggets_example.py",
    "trec_rag": "tests/judge/test_trec_rag_example.py",
    "consistency": "tests/evaluation/test_consistency_example.py",
    "mtrag_full": "tests/evaluation/test_mtrag_full.py",
    "risk_suite": "tests/synth/test_risk_suite.py",
    "risk_suite_target": "tests/target/test_risk_suite_target.py",
    "fill_qrels": "tests/judge/test_fill_qrels_example.py",
    "judge_calibration": "tests/evaluation/test_judge_calibration_example.py",
    "eval_target_python": "tests/target/test_examples_end.py",
    "eval_target_http": "tests/target/test_examples_end.py",
    "eval_traces": "tests/benchmark/traces/test_example_end.py",
    "eval_traces_retrieval": "tests/benchmark/traces/test_example_retrieval.py",
}
SWEEPS = {"sweep_rag", "sweep_retrieval"}  # `ultra sweep` specs, not pipelines (tests/client/test_sweep.py)


def test_every_example_has_its_end_checked_by_a_test() -> None:
    root = Path(__file__).resolve().parents[2]
    examples = {path.stem for path in (root / "examples").glob("*.yaml")}
    assert examples - SWEEPS == set(ENDS_CHECKED_BY), "an example without a test of its end, or a test of none"
    for name, test in ENDS_CHECKED_BY.items():
        text = (root / test).read_text(encoding="utf-8")
        assert "check_summary(" in text or "run_example(" in text, test
        assert f"examples/{name}.yaml" in text or f'"{name}"' in text or f"{name}.yaml" in text, (name, test)
