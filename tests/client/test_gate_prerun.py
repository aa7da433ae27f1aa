"""A gate's metric is checked before the run spends anything: at ``ultra build`` (the pipeline's ``gate:`` block)
and at the start of ``ultra run`` (with ``--gate FILE``), its variable must be one a step produces (or
``failed_fraction``); else exit 2 at the condition's file:line with "did you mean". The key inside a mapping
result is checked after the run (tests/client/test_gates.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.client.test_gates import eval_trec_project, gate_file
from tests.conftest import ROOT, run_ultra
from ultra_client.errors import UltraError
from ultra_client.gates.spec import Condition, GateNotEvaluable, check_gate_variables


def test_ultra_build_refuses_a_gate_on_a_variable_no_step_produces(tmp_path: Path) -> None:
    pipeline = eval_trec_project(
        tmp_path, "gate:\n  - {metric: failed_fraction, max: 0}\n  - {metric: eval_rse.map, min: 0.2}\n"
    )
    line = pipeline.read_text().splitlines().index("  - {metric: eval_rse.map, min: 0.2}") + 1
    done = run_ultra("build", str(pipeline), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    expected = f"{pipeline}:{line}: gate metric eval_rse.map: no step of the pipeline produces a variable 'eval_rse'"
    assert expected + "; did you mean 'eval_res'?" in done.stderr and "Traceback" not in done.stderr


def test_ultra_run_stops_before_its_first_step_on_an_unknown_gate_variable(tmp_path: Path) -> None:
    pipeline = eval_trec_project(tmp_path)
    gate = gate_file(tmp_path, [{"metric": "eval_res.map", "min": 0}, {"metric": "scores.map", "min": 0.2}])
    runs = tmp_path / "runs"
    done = run_ultra("run", str(pipeline), "--gate", str(gate), "--output-dir", str(runs), cwd=tmp_path, timeout=240)
    assert done.returncode == 2, done.stdout + done.stderr
    line = gate.read_text().splitlines().index("- metric: scores.map") + 1
    unknown = f"{gate}:{line}: gate metric scores.map: no step of the pipeline produces a variable 'scores'"
    assert unknown + "; did you mean 'counts'?" in done.stderr
    assert "the run stopped before its first step" in done.stderr
    assert not (tmp_path / "evaluation").exists()  # evaluate_trec never ran: nothing saved
    assert not runs.exists() or not any(runs.iterdir())  # no run folder left behind


def test_the_check_passes_produced_variables_and_failed_fraction() -> None:
    where = "gate.yaml:4"
    check_gate_variables([Condition("eval_res.map", min=0.1), Condition("failed_fraction", max=0)], {"eval_res"})
    check_gate_variables([Condition("kappa_graded", min=0.4)], ["kappa_graded", "eval_res"])  # a plain variable
    with pytest.raises(GateNotEvaluable) as caught:
        check_gate_variables([Condition("kappa_graed", min=0.4, where=where)], ["kappa_graded", "eval_res"])
    assert str(caught.value) == (
        "gate.yaml:4: gate metric kappa_graed: no step of the pipeline produces a variable 'kappa_graed'; "
        "did you mean 'kappa_graded'?"
    )
    assert isinstance(caught.value, UltraError) and caught.value.exit_code == 2


def test_a_variable_produced_in_one_branch_only_may_be_gated(tmp_path: Path) -> None:
    """examples/risk_suite.yaml: ``faithfulness`` comes from the grounded branch only, ``guardrail`` from the other
    (the dataflow keeps only what every branch produces; a gate may name either). A typo is still refused."""
    (tmp_path / "examples").mkdir()
    text = (ROOT / "examples/risk_suite.yaml").read_text()
    gate = "gate:\n  - {metric: faithfulness.faithfulness, min: 0.5}\n  - {metric: guardrail.safe, min: 0.9}\n"
    pipeline = tmp_path / "examples" / "risk_suite.yaml"
    pipeline.write_text(text + gate + "  - {metric: toxicity.toxic, max: 0.1}\n")
    done = run_ultra("build", str(pipeline), cwd=ROOT, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    pipeline.write_text(text + gate + "  - {metric: toxcity.toxic, max: 0.1}\n")
    done = run_ultra("build", str(pipeline), cwd=ROOT, timeout=240)
    assert done.returncode == 2 and "variable 'toxcity'; did you mean 'toxicity'?" in done.stderr, done.stderr


def test_an_estimate_checks_the_gate_too_and_says_it_is_not_judged(tmp_path: Path) -> None:
    """``ultra run --estimate --gate FILE``: the same check (exit 2, file:line, "did you mean"); a good gate is said
    to be checked, not judged (nothing ran)."""
    pipeline = eval_trec_project(tmp_path)
    bad = gate_file(tmp_path, [{"metric": "scores.map", "min": 0.2}])
    done = run_ultra("run", str(pipeline), "--estimate", "--gate", str(bad), cwd=tmp_path, timeout=240)
    assert done.returncode == 2 and "did you mean 'counts'?" in done.stderr, done.stdout + done.stderr
    good = tmp_path / "good.yaml"
    good.write_text("gate:\n  - {metric: eval_res.map, min: 0.2}\n")
    done = run_ultra("run", str(pipeline), "--estimate", "--gate", str(good), cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gate: 1 condition(s) checked; they are judged after a run, not by --estimate" in done.stdout
