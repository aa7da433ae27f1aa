"""Shared sweep studies on a loaded machine: a live worker that is slow is not taken for a lost one, and a worker
whose trial was failed as lost while it still ran it (it stalled past the grace) carries on without running a
point twice. Real storage files and real worker processes, as in test_sweep_lost.py."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest

from tests.client.test_sweep_lost import STATES, completed_points, join_as_worker, storage_url
from tests.client.test_sweep_shared import WAIT, nap_project, start

optuna = pytest.importorskip("optuna")
pytestmark = pytest.mark.filterwarnings("ignore:Heartbeat of storage is supposed to be used with Study.optimize")


@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_a_slow_claim_that_keeps_writing_is_not_lost(toy_project: Path, kind: str, monkeypatch) -> None:
    """A claim that takes longer than the grace (a loaded machine: seconds between Optuna's ask and the worker's
    mark), but writes to its trial as it goes, is not failed; once the trial stays unchanged for the grace, it is
    failed and queued once more."""
    from ultra_client.sweep.beats import fail_lost

    claims = join_as_worker(nap_project(toy_project, 0.0), storage_url(kind), monkeypatch)
    handle = dataclasses.replace(claims.handle, grace=1)
    trial = claims.study.ask()  # created and running, not marked: a claim under way
    looks: dict = {}
    for step in range(8):  # 2.4 s, more than twice the grace: a write every 0.3 s, as a slow claim's steps
        handle.storage.set_trial_system_attr(trial._trial_id, f"step_{step}", step)
        fail_lost(handle, looks)
        time.sleep(0.3)
        fail_lost(handle, looks)
    assert handle.storage.get_trial(trial._trial_id).state == STATES.RUNNING
    deadline = time.monotonic() + WAIT
    while handle.storage.get_trial(trial._trial_id).state == STATES.RUNNING and time.monotonic() < deadline:
        fail_lost(handle, looks)  # now silent: lost after the grace
        time.sleep(0.1)
    assert handle.storage.get_trial(trial._trial_id).state == STATES.FAIL
    retries = [t for t in claims.study.get_trials() if t.system_attrs.get("failed_trial") == trial.number]
    assert [t.state for t in retries] == [STATES.WAITING]


def test_a_worker_whose_running_trial_was_failed_as_lost_carries_on(toy_project: Path, tmp_path: Path) -> None:
    """Another worker failed this worker's running trial as lost (as when a loaded machine stalls its beats past
    the grace): the worker finishes the trial, says so instead of a traceback, and its retry reuses the folder
    it wrote, so the point runs once and the study ends with every point done."""
    from ultra_client.sweep.beats import _fail_and_retry
    from ultra_client.sweep.storage import open_storage

    project = nap_project(toy_project, 1.0)
    url = storage_url("sqlite")
    sweep = ["sweep", "pipes/nap.yaml", "--grid", "evaluation.max_depth=[5, 50]", "--metric", "eval_res.map",
             "--heartbeat", "1", "--output-dir", "sw", "--storage", url, "--study", "s", "--no-report"]  # fmt: skip
    worker = start(project, *sweep, log=tmp_path / "worker.log")
    store = f"sqlite:///{project / 'sw' / 'study.db'}"
    deadline = time.monotonic() + WAIT
    running = []
    while not running and time.monotonic() < deadline and worker.poll() is None:
        try:
            study = optuna.load_study(study_name="s", storage=store)
        except Exception:  # noqa: BLE001 - the study or its tables are not there yet
            time.sleep(0.05)
            continue
        running = [t for t in study.get_trials(states=(STATES.RUNNING,)) if "ultra_worker" in t.user_attrs]
        time.sleep(0.05)
    assert running, (tmp_path / "worker.log").read_text()
    handle = dataclasses.replace(open_storage(store, 1), study=study)
    _fail_and_retry(handle, running[0])  # what a worker that saw no beat for the grace does
    assert worker.wait(timeout=WAIT) == 0, (tmp_path / "worker.log").read_text()
    log = (tmp_path / "worker.log").read_text()
    assert f"trial {running[0].number}: failed as lost while this worker ran it" in log and "Traceback" not in log
    trials = study.get_trials()
    assert next(t for t in trials if t.number == running[0].number).state == STATES.FAIL
    retry = next(t for t in trials if t.system_attrs.get("failed_trial") == running[0].number)
    assert retry.state == STATES.COMPLETE and "finished before, not run again" in log
    points = completed_points(study)
    assert len(points) == 2 and len(set(points)) == 2
    records = [json.loads(p.read_text()) for p in (project / "sw").glob("trials/*/trial.json")]
    assert len(records) == 2  # each point ran once: the retry took the lost trial's folder


SLOW_HASHING = """import sys, time
import ultra_client.sweep.trials as trials
digest = trials.file_digest
hashed = set()
def slow(path):  # a large corpus on a busy disk: each data file takes 2.5 s to hash, the first time
    if path not in hashed:
        time.sleep(2.5)
        hashed.add(path)
    return digest(path)
trials.file_digest = slow
from ultra_client.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_worker_beats_while_it_hashes_the_trials_data(toy_project: Path, tmp_path: Path) -> None:
    """The fingerprint of a worker's first trial hashes the data files its settings name (here two, 2.5 s each:
    longer than the grace of 3 s): the trial's heartbeat runs meanwhile, so a worker looking at the study all
    along (this test) finds no trial lost, and every trial ran once."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT
    from ultra_client.sweep.beats import fail_lost
    from ultra_client.sweep.storage import open_storage

    project = nap_project(toy_project, 0.0)
    sweep = ["sweep", "pipes/nap.yaml", "--grid", "evaluation.max_depth=[5, 50]", "--metric", "eval_res.map",
             "--heartbeat", "1", "--output-dir", "sw", "--storage", storage_url("sqlite"), "--study", "s",
             "--no-report"]  # fmt: skip
    with open(tmp_path / "worker.log", "wb") as log:
        worker = subprocess.Popen([sys.executable, "-c", SLOW_HASHING, *sweep], cwd=project, stdout=log,
                                  stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    store = f"sqlite:///{project / 'sw' / 'study.db'}"
    deadline, looks, handle = time.monotonic() + WAIT, {}, None
    while worker.poll() is None and time.monotonic() < deadline:
        if handle is None and (project / "sw" / "study.db").exists():
            try:
                opened = open_storage(store, 1)  # heartbeats on: Optuna's stale check needs them
                handle = dataclasses.replace(opened, study=optuna.load_study(study_name="s", storage=opened.storage))
            except Exception:  # noqa: BLE001 - the study or its tables are not there yet
                handle = None
        if handle is not None:
            fail_lost(handle, looks)  # what another worker does between its trials
        time.sleep(0.1)
    assert worker.wait(timeout=WAIT) == 0, (tmp_path / "worker.log").read_text()
    assert handle is not None, (tmp_path / "worker.log").read_text()
    states = [t.state for t in optuna.load_study(study_name="s", storage=store).get_trials()]
    assert states == [STATES.COMPLETE, STATES.COMPLETE], (tmp_path / "worker.log").read_text()
