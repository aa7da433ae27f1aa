"""``ultra trec_eval`` prints what trec_eval 10.0 prints, byte for byte, on trec_eval's own test files.

The expected outputs in tests/data/trec_eval were produced by trec_eval v10.0 (the README there gives
each command line, repeated in CASES). Measure parameters are also checked against pytrec_eval where it
computes the parameterised measure.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ultra_client import cli, trec_eval_command
from ultra_trec.engine import evaluate
from ultra_trec.registry import FAMILIES, NICKNAMES
from ultra_trec.trec_eval_text import measures_from_options

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
ROOT = Path(__file__).resolve().parents[2]
MEAS_PARAMS = [
    "-q",
    "-miprec_at_recall..10,.20,.25,.75,.50",
    "-m",
    "P.5,7,3",
    "-m",
    "recall.20,2000",
    "-m",
    "Rprec_mult.5.0,0.2,0.35",
    "-mutility.2,-1,0,0",
    "-m",
    "11pt_avg..25,.5,.75",
    "-mndcg.1=3,2=9,4=4.5",
    "-mndcg_cut.10,20,23",  # trec_eval's test writes 23.4, which C's atol reads as 23: refused here
    "-msuccess.2,5,20",
]
CASES = {
    "out.test": ["qrels.test", "results.test"],
    "out.test.a": ["-m", "all_trec", "qrels.test", "results.test"],
    "out.test.aq": ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    "out.test.aqc": ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    "out.test.aqcM": ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
    "out.test.aql": ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"],
    "out.test.meas_params": [*MEAS_PARAMS, "qrels.test", "results.test"],
}


def _argv(args: list[str]) -> list[str]:
    return [str(DATA / a) if (DATA / a).is_file() else a for a in args]


@pytest.mark.parametrize("expected", sorted(CASES))
def test_report_is_byte_identical(expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["trec_eval", *_argv(CASES[expected])]) == 0  # through the ultra command's registration
    assert capsys.readouterr().out == (DATA / expected).read_text()


def test_real_subprocess_prints_the_same_bytes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ultra_client.trec_eval_command", *_argv(CASES["out.test.meas_params"])],
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (DATA / "out.test.meas_params").read_bytes()


def test_no_summary_and_judged_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert trec_eval_command.main(["-q", "-n", "-m", "map", *_argv(["qrels.test", "results.test"])]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[1] for line in lines] == ["301", "302", "303"]  # -n: no 'all' line
    expected = {
        line.split("\t")[1]: line for line in (DATA / "out.test.aq").read_text().splitlines() if line.startswith("map ")
    }
    assert lines == [expected[q] for q in ("301", "302", "303")]
    # -J drops the retrieved documents absent from the qrels: results.test keeps 500 - unjudged per query
    assert trec_eval_command.main(["-J", "-m", "num_ret", "-m", "P.1000", *_argv(["qrels.test", "results.test"])]) == 0
    judged = evaluate(DATA / "qrels.test", DATA / "results.test", ["num_nonrel_judged_ret", "num_rel_ret"]).counts
    out = dict(line.split("\t")[0::2] for line in capsys.readouterr().out.splitlines())
    nonrel = evaluate(DATA / "qrels.test", DATA / "results.test", ["num_nonrel_judged_ret"]).aggregate
    assert int(out["num_ret".ljust(22)]) == judged["num_rel_ret"] + int(nonrel["num_nonrel_judged_ret"])
    assert float(out["P_1000".ljust(22)]) == pytest.approx(judged["num_rel_ret"] / 3 / 1000, abs=5e-5)


def test_first_parameters_win_and_order_is_trec_evals() -> None:
    names = [m.trec_name for m in measures_from_options(["P.10", "map", "P.5", "runid"])]
    assert names == ["runid", "map", "P_10"]  # trec_eval's table order, not the command line's
    assert [m.trec_name for m in measures_from_options([])] == [
        m.trec_name for m in measures_from_options(list(NICKNAMES["official"]))
    ]


def test_every_trec_eval_name_is_accepted() -> None:
    trec_names = {n for f in FAMILIES.values() for n in (f.trec_name, f.trec_cut_name) if n}
    for name in sorted(trec_names):
        assert measures_from_options([name]), name


def test_set_f_beta_and_cutoff_lists_agree_with_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels: dict[str, dict[str, int]] = {}
    for line in (DATA / "qrels.test").read_text().splitlines():
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    run: dict[str, dict[str, float]] = {}
    for line in (DATA / "results.test").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    options = ["set_F.0.5", "P.3,7", "recall.20,2000", "ndcg_cut.10,23", "success.2,20"]
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(options)).evaluate(run)
    result = evaluate(DATA / "qrels.test", DATA / "results.test", measures_from_options(options)).renamed("trec_eval")
    for qid, row in result.per_query.items():
        for name, value in theirs[qid].items():
            mine = row["set_F_0.5" if name == "set_F" else name]  # pytrec_eval drops the parameters from the name
            assert mine == pytest.approx(value, abs=1e-12), (qid, name)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "nope"], "unknown measure 'nope'"),
        (["-m", "map.5"], "map takes no parameters"),
        (["-m", "P.5,5"], "a cutoff is given twice"),
        (["-m", "P.0"], "cutoffs must be positive"),
        (["-mndcg_cut.10,20,23.4"], "cutoff '23.4' is not a whole number"),
        (["-m", "utility.1,2"], "give 4 numbers"),
        (["-m", "ndcg.a=1"], "integer grade"),
        (["-m", "P."], "nothing after '.'"),
    ],
)
def test_bad_measures_exit_2_with_a_message(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert trec_eval_command.main([*args, *_argv(["qrels.test", "results.test"])]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bad_files_name_the_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad_run = tmp_path / "bad.run"
    bad_run.write_text("301 Q0 doc1 1 0.5 tag\n301 Q0 doc2 2 high tag\n")
    assert trec_eval_command.main([str(DATA / "qrels.test"), str(bad_run)]) == 2
    err = capsys.readouterr().err
    assert f"{bad_run}:2:" in err and "Traceback" not in err
    assert trec_eval_command.main([str(tmp_path / "absent.qrels"), str(bad_run)]) == 2
    assert "absent.qrels" in capsys.readouterr().err
    other = tmp_path / "other.run"
    other.write_text("999 Q0 doc1 1 0.5 tag\n")
    assert trec_eval_command.main([str(DATA / "qrels.test"), str(other)]) == 2
    assert "no query in common" in capsys.readouterr().err


def test_command_imports_no_server_mcp_or_pydantic() -> None:
    code = (
        "import sys; from ultra_client import trec_eval_command as t; "
        f"t.main(['-m', 'map', {str(DATA / 'qrels.test')!r}, {str(DATA / 'results.test')!r}]); "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'pydantic', 'servers', 'anyio')]; "
        "assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr


def test_parameters_by_hand() -> None:
    qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}
    run = {"q": ["a", "b", "c", "x"]}  # ranks 1..4; x is not in the qrels
    values = evaluate(qrels, run, ["rbp.p=0.5", "rbp_resid.p=0.5", "set_F.2", "utility.2,-1,0,0", "ndcg.1=3"]).aggregate
    # rbp: gains grade / max grade: a 1.0, c 0.5 -> 0.5 * (1 + 0.5 * 0.25)
    assert values["rbp(p=0.5)"] == pytest.approx(0.5 * (1 + 0.5 * 0.25))
    assert values["rbp_resid(p=0.5)"] == pytest.approx(0.5**4 + 0.5 * 0.5**3)  # x at rank 4 is unjudged
    p, r = 2 / 4, 2 / 3  # a and c relevant (grade >= 1) of 4 retrieved, 3 relevant in all
    assert values["set_F(2)"] == pytest.approx(3 * p * r / (2 * p + r))
    assert values["utility(2,-1,0,0)"] == 2 * 2 - 1 * 2
    dcg = 2 / 1 + 3 / 2  # a: grade 2 keeps gain 2; c: grade 1 gains 3 at rank 3 (log2 4 = 2)
    idcg = 3 + 3 / 1.584962500721156 + 2 / 2  # ideal: c, d (gain 3), a (gain 2)
    assert values["ndcg(1=3)"] == pytest.approx(dcg / idcg)


def test_11pt_avg_levels_out_of_order_follow_trec_evals_loop() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}
    run = {"q": ["a", "x", "b", "y"]}  # 2 of 4 relevant retrieved: precision 1 at a, 2/3 at b
    values = evaluate(qrels, run, ["11pt_avg.0.25,0.5", "11pt_avg_0.5,0.25", "11pt_avg.1.0"]).aggregate
    assert values["11pt_avg(0.25,0.5)"] == pytest.approx((1.0 + 2 / 3) / 2)
    # from the last level: 0.25 (1 relevant) is taken, then 0.5 (2) is out of order: it gets the first's value
    assert values["11pt_avg(0.5,0.25)"] == pytest.approx((1.0 + 1.0) / 2)
    assert values["11pt_avg(1.0)"] == 0.0  # 4 relevant never reached


def test_judged_only_query_left_empty_prints_nan_as_trec_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    run.write_text("1 Q0 a 1 2.0 t\n1 Q0 x 2 1.0 t\n2 Q0 y 1 1.0 t\n")  # query 2 retrieves only unjudged y
    assert (
        trec_eval_command.main(["-q", "-J", "-m", "iprec_at_recall.0,.5", "-m", "11pt_avg", str(qrels), str(run)]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert "iprec_at_recall_0.00  \t2\t  -nan" in lines  # 0 / 0 in trec_eval's C code
    assert "iprec_at_recall_0.50  \t2\t0.0000" in lines  # round(0.5 * 1) = 1 relevant: never reached
    assert "11pt_avg              \t2\t  -nan" in lines and "11pt_avg              \tall\t  -nan" in lines
    assert "iprec_at_recall_0.50  \t1\t1.0000" in lines
