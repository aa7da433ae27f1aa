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


KINDS = ["sqlite", "journal"]


def slow_claim(claims: object) -> tuple[object, object, list[object]]:
    """Claim a trial (Optuna's ask, not marked: a claim under way) and write to it every 0.3 s for 4.2 s, more than
    the grace of 3 s (--heartbeat 1), looking for lost trials as a worker does; then stay silent until it is failed.
    Its state after the writes, its state at the end, and the states of its retries."""
    from ultra_client.sweep.beats import fail_lost

    handle = claims.handle
    trial = claims.study.ask()
    looks: dict = {}
    for step in range(14):  # a write every 0.3 s, as a slow claim's steps
        handle.storage.set_trial_system_attr(trial._trial_id, f"step_{step}", step)
        fail_lost(handle, looks)
        time.sleep(0.3)
        fail_lost(handle, looks)
    after_writes = handle.storage.get_trial(trial._trial_id).state
    deadline = time.monotonic() + WAIT
    while handle.storage.get_trial(trial._trial_id).state == STATES.RUNNING and time.monotonic() < deadline:
        fail_lost(handle, looks)  # now silent: lost after the grace
        time.sleep(0.1)
    retries = [t for t in claims.study.get_trials() if t.system_attrs.get("failed_trial") == trial.number]
    return after_writes, handle.storage.get_trial(trial._trial_id).state, [t.state for t in retries]


@pytest.fixture(scope="module")
def slow_claims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple | BaseException]:
    """``slow_claim`` on each storage kind, both at once (their waits are sleeps): each kind's project and storage
    are its own (an absolute URL: the working directory is the process's, joined one at a time)."""
    from tests.client.conftest import toy_copy
    from tests.support.together import at_once

    claims = {}
    for kind in KINDS:
        folder = toy_copy(tmp_path_factory.mktemp(f"slow_{kind}"))
        url = f"journal:{folder}/sw/study.journal" if kind == "journal" else f"sqlite:///{folder}/sw/study.db"
        with pytest.MonkeyPatch.context() as monkeypatch:
            claims[kind] = join_as_worker(nap_project(folder, 0.0), url, monkeypatch)

    def caught(kind: str) -> tuple | BaseException:
        try:
            return slow_claim(claims[kind])
        except Exception as exc:  # noqa: BLE001 - raised in that kind's own test
            return exc

    return at_once({kind: lambda kind=kind: caught(kind) for kind in KINDS})


@pytest.mark.parametrize("kind", KINDS)
def test_a_slow_claim_that_keeps_writing_is_not_lost(slow_claims: dict, kind: str) -> None:
    """A claim that takes longer than the grace (a loaded machine: seconds between Optuna's ask and the worker's
    mark), but writes to its trial as it goes, is not failed; once the trial stays unchanged for the grace, it is
    failed and queued once more."""
    outcome = slow_claims[kind]
    if isinstance(outcome, BaseException):
        raise outcome
    after_writes, final, retries = outcome
    assert after_writes == STATES.RUNNING
    assert final == STATES.FAIL
    assert retries == [STATES.WAITING]


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
