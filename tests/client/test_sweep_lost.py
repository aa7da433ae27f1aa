"""Shared sweep studies: a worker lost between claiming a trial and its first heartbeat, and a trial that fails on
its own. Real worker processes on a real SQLite file (and a journal file), as in test_sweep_shared.py.

A worker that dies right after Optuna's ``study.ask`` leaves a running trial with no heartbeat, which Optuna never
finds stale; here that worker is played by this process, with the worker's own claim object, stopped after the ask.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.client.test_sweep_shared import POINTS, SWEEP, TREC, WAIT, nap_project
from tests.conftest import ROOT, run_ultra

optuna = pytest.importorskip("optuna")

STATES = optuna.trial.TrialState
pytestmark = pytest.mark.filterwarnings("ignore:Heartbeat of storage is supposed to be used with Study.optimize")


@pytest.fixture
def project(toy_project: Path) -> Path:
    return nap_project(toy_project, 0.2)


def storage_url(kind: str) -> str:
    return "journal:sw/study.journal" if kind == "journal" else "sqlite:///sw/study.db"


def join_as_worker(
    project: Path, url: str, monkeypatch: pytest.MonkeyPatch, sweep: list[str] = SWEEP, heartbeat: int = 1
) -> object:
    """Join study ``s`` of ``url`` as a worker does: the worker's ``Claim``."""
    from ultra_client.cli import parse
    from ultra_client.sweep.spec import build_spec
    from ultra_client.sweep.storage import identity_of, join_study, open_storage
    from ultra_client.sweep.worker import Claim

    monkeypatch.chdir(project)
    args = parse([*sweep, "--output-dir", "sw", "--storage", url, "--study", "s"])
    spec = build_spec(args)
    handle = open_storage(url, heartbeat)
    join_study(handle, "s", identity_of(spec, spec.pipeline.read_text(encoding="utf-8")))
    return Claim(spec, handle, slot=9)


def claim_and_die(
    project: Path, url: str, monkeypatch: pytest.MonkeyPatch, sweep: list[str] = SWEEP
) -> tuple[object, int]:
    """Join the study as a worker does, claim one trial as ``Claim.next`` does (``study.ask``), and go no further:
    a worker killed before its first beat. The study, and the abandoned trial's number."""
    claims = join_as_worker(project, url, monkeypatch, sweep)
    trial = claims.study.ask(claims.distributions)
    return claims.study, trial.number


def ran(study: object) -> list[object]:
    """The study's trials but those pruned unrun: two workers that ask at once for the grid's last point give one
    of them a trial that draws a held point, pruned as ``surplus`` (docs/sweeps.md, Claims)."""
    return [t for t in study.get_trials() if "ultra_skipped" not in t.user_attrs]


def completed_points(study: object) -> list[str]:
    done = [t for t in study.get_trials() if t.state == STATES.COMPLETE]
    return [json.dumps(t.user_attrs["ultra"]["values"], sort_keys=True) for t in done]


KINDS = ["sqlite", "journal"]


@pytest.fixture(scope="module")
def lost_claims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple | BaseException]:
    """On each storage kind, in a project of its own: a claim abandoned in this process (joined one kind at a time,
    with an absolute URL: the working directory is the process's), then the sweep that must fail and retry it and
    the report of the study, the two kinds at once (a live worker waits out the grace: 3 s of sleep). Each kind's
    study, lost trial number, sweep and report (or the exception it raised)."""
    from tests.client.conftest import toy_copy
    from tests.support.together import at_once

    env = {"ULTRA_ALLOW_OUTSIDE_OUTPUT": "1",
           "ULTRA_READ_ROOTS": os.pathsep.join([str(tmp_path_factory.getbasetemp()), str(ROOT)])}  # fmt: skip
    projects, claimed = {}, {}
    for kind in KINDS:
        projects[kind] = nap_project(toy_copy(tmp_path_factory.mktemp(f"lost_{kind}")), 0.2)
        here = (
            storage_url(kind)
            .replace("sqlite:///", f"sqlite:///{projects[kind]}/")
            .replace("journal:", f"journal:{projects[kind]}/")
        )
        with pytest.MonkeyPatch.context() as monkeypatch:
            claimed[kind] = claim_and_die(projects[kind], here, monkeypatch)

    def sweep_and_report(kind: str) -> tuple | BaseException:
        url, project = storage_url(kind), projects[kind]
        try:
            done = run_ultra(*SWEEP, "--output-dir", "sw", "--storage", url, "--study", "s", "--no-report",
                             cwd=project, env=env, timeout=WAIT)  # fmt: skip
            report = run_ultra("sweep", "--report", "--storage", url, "--study", "s", "--output-dir", "rep",
                               cwd=project, env=env)  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - raised in that kind's own test
            return exc
        return (*claimed[kind], done, report, project)

    return at_once({kind: lambda kind=kind: sweep_and_report(kind) for kind in KINDS})


@pytest.mark.parametrize("kind", KINDS)
def test_a_worker_lost_between_claim_and_first_beat(lost_claims: dict, kind: str) -> None:
    """The abandoned trial has no heartbeat: a live worker fails it after the grace (3 heartbeats of its own clock)
    and runs its retry, so the study finishes (before, every worker waited for it forever)."""
    outcome = lost_claims[kind]
    if isinstance(outcome, BaseException):
        raise outcome
    study, lost, done, report, project = outcome
    assert done.returncode == 0, done.stderr
    trials = study.get_trials()
    first = next(t for t in trials if t.number == lost)
    assert first.state == STATES.FAIL and "ultra" not in first.user_attrs
    retries = [t for t in trials if t.system_attrs.get("failed_trial") == lost]
    assert len(retries) == 1 and retries[0].state == STATES.COMPLETE
    assert retries[0].system_attrs["grid_id"] == first.system_attrs["grid_id"]
    points = completed_points(study)
    assert len(points) == POINTS and len(set(points)) == POINTS  # every point once
    assert not [t for t in trials if t.state in (STATES.RUNNING, STATES.WAITING)]
    assert report.returncode == 0, report.stderr
    rows = json.loads((project / "rep" / "sweep.json").read_text())["rows"]
    error = next(r["error"] for r in rows if r["trial"] == lost)
    assert error == f"its worker was lost as it claimed the trial; retried as trial {retries[0].number}"


def test_a_lost_claim_of_a_surplus_point_is_not_run(project: Path, monkeypatch) -> None:
    """A worker lost as it claimed a trial that it would have pruned unrun (its grid point was held): the retry
    is pruned as that trial would have been, and no point runs twice."""
    url = storage_url("sqlite")
    first = run_ultra(*SWEEP, "--output-dir", "sw", "--storage", url, "--study", "s", "--no-report", cwd=project)
    assert first.returncode == 0, first.stderr
    study, lost = claim_and_die(project, url, monkeypatch)  # the grid is done: a held point, numbered past it
    assert lost == POINTS
    again = run_ultra(*SWEEP, "--output-dir", "sw", "--storage", url, "--study", "s", "--no-report",
                      cwd=project, timeout=WAIT)  # fmt: skip
    assert again.returncode == 0, again.stderr
    retry = next(t for t in study.get_trials() if t.system_attrs.get("failed_trial") == lost)
    assert retry.state == STATES.PRUNED and retry.user_attrs["ultra_skipped"] == "surplus"
    points = completed_points(study)
    assert len(points) == POINTS and len(set(points)) == POINTS


def test_a_lost_claim_past_a_random_budget_uses_no_slot(project: Path, monkeypatch) -> None:
    """--random 3: a worker lost as it claimed a fourth trial (which it would have pruned as surplus). Its retry
    is pruned unrun, and the lost trial is no row of the table, no failed trial in --status, no slot: the study
    holds three trials that ran, as max_trials bounds the whole study."""
    url = storage_url("journal")
    sweep = ["sweep", "pipes/nap.yaml", "--grid", "evaluation.max_depth={low: 1, high: 1000}", "--random", "3",
             "--metric", "eval_res.map", "--heartbeat", "1"]  # fmt: skip
    shared = ["--output-dir", "sw", "--storage", url, "--study", "s"]
    first = run_ultra(*sweep, *shared, "--no-report", cwd=project, timeout=WAIT)
    assert first.returncode == 0, first.stderr
    study, lost = claim_and_die(project, url, monkeypatch, sweep)
    assert lost == 3
    again = run_ultra(*sweep, *shared, cwd=project, timeout=WAIT)  # fails the lost trial, prunes its retry
    assert again.returncode == 0, again.stderr
    retry = next(t for t in study.get_trials() if t.system_attrs.get("failed_trial") == lost)
    assert retry.state == STATES.PRUNED and retry.user_attrs["ultra_skipped"] == "surplus"
    assert next(t for t in study.get_trials() if t.number == lost).state == STATES.FAIL
    rows = json.loads((project / "sw" / "sweep.json").read_text())["rows"]
    assert sorted(r["trial"] for r in rows) == [0, 1, 2] and all(r["status"] == "ok" for r in rows)
    status = run_ultra("sweep", "--status", "--storage", url, "--study", "s", cwd=project)
    assert "trials: 3 done, 0 failed, 0 running, 0 waiting" in status.stdout, status.stdout


def test_a_trial_that_fails_on_its_own_is_not_retried_in_its_study(project: Path) -> None:
    """docs/sweeps.md: a trial that failed on its own counts as done and is not run again in that study (Optuna's
    retry callback is for lost trials only); a new study with the same --output-dir reuses the successful trials'
    folders and reruns the failed ones."""
    later = project / "later.qrels"  # missing at first: the trials that read it fail on their own
    paths = f"evaluation.qrels_path=[{TREC / 'qrels.test'}, {later}]"
    grid = ["--grid", "evaluation.max_depth=[5, 50]", "--grid", paths]
    sweep = ["sweep", "pipes/nap.yaml", *grid, "--metric", "eval_res.map", "--heartbeat", "1", "--output-dir", "sw"]
    shared = ["--storage", "sqlite:///sw/study.db"]
    first = run_ultra(*sweep, *shared, "--study", "s", "--workers", "2", cwd=project, timeout=WAIT)
    assert first.returncode == 0, first.stderr
    study = optuna.load_study(study_name="s", storage=f"sqlite:///{project / 'sw' / 'study.db'}")
    trials = ran(study)
    failed = [t for t in trials if t.state == STATES.FAIL]
    assert len(trials) == 4 and len(failed) == 2
    assert all(t.user_attrs["ultra"]["values"]["evaluation.qrels_path"] == str(later) for t in failed)
    assert all("later.qrels" in t.user_attrs["ultra"]["error"] for t in failed)  # the tool's own error
    status = run_ultra("sweep", "--status", *shared, "--study", "s", cwd=project)
    assert "trials: 2 done, 2 failed, 0 running, 0 waiting" in status.stdout, status.stdout
    rerun = run_ultra(*sweep, *shared, "--study", "s", cwd=project, timeout=WAIT)  # the same study: nothing to do
    assert rerun.returncode == 0, rerun.stderr
    assert len(ran(study)) == 4 and "[ultra] trial " not in rerun.stderr
    shutil.copy(TREC / "qrels.test", later)
    fresh = run_ultra(*sweep, *shared, "--study", "s2", cwd=project, timeout=WAIT)
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stderr.count("finished before, not run again") == 2  # the successful trials' folders
    second = optuna.load_study(study_name="s2", storage=f"sqlite:///{project / 'sw' / 'study.db'}")
    assert [t.state for t in second.get_trials()] == [STATES.COMPLETE] * 4
