"""Measure parameters trec_eval reads otherwise than they are written (C's ``atof`` reads ``abc`` as 0 and
``1_0`` as 1; a gain of a grade that is not a sign and digits is ignored), through ``ultra trec_eval`` and
``ultra call evaluation.evaluate_trec``: a whole C number is read as trec_eval reads it (hexadecimal
``0x1p-1`` included); any other text is refused with the number trec_eval would have used, and that
number, written out, gives trec_eval's value.

``TREC_EVAL_10`` holds what trec_eval 10.0 (usnistgov/trec_eval f425365, built with gcc) prints for each
``-m`` option on data/trec's qrels.test and results.test. With a ``trec_eval`` on PATH,
``test_the_numbers_are_trec_eval_s`` checks them against it.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from ultra_trec.c_numbers import c_double

QRELS = ROOT / "data/trec/qrels.test"
RUN = ROOT / "data/trec/results.test"

TREC_EVAL_10 = {  # -m option: (the name trec_eval 10.0 prints, its value over all queries)
    "iprec_at_recall.0x1p-1": ("iprec_at_recall_0.50", 0.2184),
    "set_F.0x1p-1": ("set_F_0x1p-1", 0.1045),
    "rbp.p=0x1p-1": ("rbp_p=0x1p-1", 0.2966),
    "iprec_at_recall.abc": ("iprec_at_recall_0.00", 0.4665),
    "iprec_at_recall.1_0": ("iprec_at_recall_1.00", 0.0312),
    "iprec_at_recall.nan": ("iprec_at_recall_nan", 0.4665),
    "Rprec_mult.0.5x": ("Rprec_mult_0.50", 0.2983),
    "set_F.1_0": ("set_F_1_0", 0.1194),
    "utility.1,-1,0,0x": ("utility_1,-1,0,0x", -412.6667),
    "11pt_avg..5,x": ("11pt_avg_.5,x", 0.4665),
    "rbp.p=0.8x": ("rbp_p=0.8x", 0.3077),
    "ndcg.abc=3": ("ndcg_abc=3", 0.4021),
    "ndcg.-1=3": ("ndcg_-1=3", 10.1510),
    "set_F. 0.5": ("set_F_ 0.5", 0.1045),  # the parameters as typed, spaces too
    "ndcg. 1=3": ("ndcg_ 1=3", 0.4021),  # grade " 1" is no grade: the gain is ignored
    "rbp. p=0.5": ("rbp_ p=0.5", 0.3234),  # " p" is not p: rbp's own 0.9
}

ACCEPTED = ["iprec_at_recall.0x1p-1", "set_F.0x1p-1", "rbp.p=0x1p-1", "set_F. 0.5"]

REFUSED = {  # -m option: (what the refusal says, the option that writes out trec_eval's reading, or None)
    "iprec_at_recall.abc": ("'abc' is not a number (e.g. 0.5); trec_eval would silently read 'abc' as 0",
                            "iprec_at_recall.0"),
    "iprec_at_recall.1_0": ("trec_eval would silently read '1_0' as 1", "iprec_at_recall.1"),  # Python's float: 10
    "iprec_at_recall.nan": ("got nan (trec_eval accepts it and prints a number that means nothing",
                            "iprec_at_recall.0"),
    "Rprec_mult.0.5x": ("trec_eval would silently read '0.5x' as 0.5", "Rprec_mult.0.5"),
    "set_F.1_0": ("trec_eval would silently read '1_0' as 1", "set_F.1"),  # beta 10 gave 0.2552 before
    "utility.1,-1,0,0x": ("trec_eval would silently read '0x' as 0", "utility.1,-1,0,0"),
    "11pt_avg..5,x": ("trec_eval would silently read 'x' as 0", "11pt_avg..5,0"),
    "rbp.p=0.8x": ("trec_eval would silently read '0.8x' as 0.8", "rbp.p=0.8"),
    "ndcg.abc=3": ("trec_eval would silently ignore the gain of 'abc'", "ndcg"),
    "ndcg.-1=3": ("grade -1 is negative; give gains of grades 0 and up", None),  # trec_eval: an ndcg of 10.15
    "ndcg. 1=3": ("trec_eval would silently ignore the gain of ' 1'", "ndcg"),
    "rbp. p=0.5": ("give the persistence as p=x", "rbp"),
}  # fmt: skip


def _trec_eval(option: str) -> subprocess.CompletedProcess:
    return run_ultra("trec_eval", "-m", option, str(QRELS), str(RUN), cwd=ROOT)


def _printed(stdout: str) -> dict[str, float]:
    return {line.split("\t")[0].strip(): float(line.split("\t")[2]) for line in stdout.splitlines()}


@pytest.mark.parametrize("option", ACCEPTED)
def test_a_whole_c_number_is_read_as_trec_eval_reads_it(option: str) -> None:
    done = _trec_eval(option)
    assert done.returncode == 0, done.stderr
    assert _printed(done.stdout) == dict([TREC_EVAL_10[option]])


@pytest.mark.parametrize("option", REFUSED)
def test_a_parameter_trec_eval_misreads_is_refused_saying_how(option: str) -> None:
    message, written_out = REFUSED[option]
    done = _trec_eval(option)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
    if written_out is not None:  # what the message says trec_eval reads gives trec_eval's number
        again = _trec_eval(written_out)
        assert again.returncode == 0, again.stderr
        assert list(_printed(again.stdout).values()) == [TREC_EVAL_10[option][1]]


def test_evaluate_trec_reads_parameters_the_same_way(tmp_path: Path) -> None:
    def call(measure: str) -> subprocess.CompletedProcess:
        return run_ultra(
            "call", "evaluation.evaluate_trec", f"run_path={RUN}", f"qrels_path={QRELS}",
            f"ir_metrics={json.dumps([measure])}", "ks=[]", "names=trec_eval", f"save_path={tmp_path}/",
            cwd=tmp_path,
        )  # fmt: skip

    done = call("iprec_at_recall.0x1p-1")
    assert done.returncode == 0, done.stderr
    assert {k: round(v, 4) for k, v in json.loads(done.stdout)["eval_res"].items()} == {"iprec_at_recall_0.50": 0.2184}
    refused = call("set_F.1_0")
    assert refused.returncode != 0 and "trec_eval would silently read '1_0' as 1" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_the_numbers_are_trec_eval_s() -> None:
    binary = shutil.which("trec_eval")
    if binary is None:
        pytest.skip("no trec_eval on PATH: TREC_EVAL_10 was printed by trec_eval 10.0 and is not re-checked")
    for option, (name, value) in TREC_EVAL_10.items():
        done = subprocess.run([binary, "-m", option, str(QRELS), str(RUN)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert _printed(done.stdout) == {name: value}, option


@pytest.mark.parametrize(
    ("text", "value", "whole"),
    [  # what glibc's strtod reads (and where it stops), checked with a C program
        ("0x", 0.0, False),
        ("1e+", 1.0, False),
        (".e1", 0.0, False),
        ("infinit", math.inf, False),
        ("1.5e3x", 1500.0, False),
        ("1_0", 1.0, False),
        (".", 0.0, False),
        (" .5 ", 0.5, True),
        ("+.5", 0.5, True),
        ("0x.8p1", 1.0, True),
        ("0X1P-1", 0.5, True),
        ("INFINITY", math.inf, True),
    ],
)
def test_c_double_reads_what_atof_reads(text: str, value: float, whole: bool) -> None:
    assert c_double(text) == (value, whole)
    assert math.isnan(c_double("nan(abc)")[0]) and c_double("nan(abc)")[1]
