"""Heartbeats of a shared study's running trials, and what becomes of a trial whose worker is lost.

A worker claims a trial (Optuna's ``study.ask``), beats for it at once, then marks it as its own (the user
attribute ``ultra_worker``: host, pid, slot and the trial's number), and beats every ``heartbeat`` seconds while
it runs it: Optuna's RDB heartbeat, or on a journal file the system attribute ``ultra_heartbeat`` (the trial's
number and the time).

Whichever worker looks next fails a running trial that is lost, and Optuna's
``RetryHeartbeatStaleTrialCallback(max_retry=1)`` queues it once more (a waiting trial, asked first):

* a trial that beat, then stayed silent for ``grace`` seconds (Optuna's ``fail_stale_trials`` on RDB storage, the
  beat's time on a journal file);
* a trial that nobody marked as theirs, and that stayed unchanged for ``grace`` seconds of the looking worker's
  own clock: its worker died between the claim and its first beat, where no heartbeat would ever make it stale
  (Optuna ignores a trial without one). No clocks are compared. A live worker's claim writes to the trial as it
  goes (Optuna's ask stores the grid point and the values, then the first beat and the mark), and each write
  restarts that clock: on a loaded machine the whole claim takes seconds (4.8 s seen with three workers on a
  database server at a load of 27 on 2 cores), longer than a short grace, but no step of it does.

A retry is created with a copy of its lost trial's attributes, so a beat or a mark counts only when it names the
trial's own number.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import warnings
from typing import Any

HOST = socket.gethostname()
WORKER = "ultra_worker"  # the user attribute naming the worker that claimed the trial: host, pid, slot, trial
BEAT = "ultra_heartbeat"  # on a journal file: the system attribute holding a running trial's [number, last beat]


def claim(handle: Any, trial: Any, slot: int) -> None:
    """Make a just-asked trial this worker's: a first beat, then the mark. Raises Optuna's
    ``UpdateFinishedTrialError`` when another worker already failed it as lost (this one stalled that long)."""
    beat(handle, trial)
    trial.set_user_attr(WORKER, {"host": HOST, "pid": os.getpid(), "slot": slot, "trial": trial.number})


def beat(handle: Any, trial: Any) -> None:
    """One heartbeat of a running trial."""
    if handle.journal:
        handle.storage.set_trial_system_attr(trial._trial_id, BEAT, [trial.number, time.time()])
    else:
        handle.storage.record_heartbeat(trial._trial_id)


@contextlib.contextmanager
def heartbeat(handle: Any, trial: Any):
    """Beat for ``trial`` from a thread until the block ends (a busy event loop does not stop the beats)."""
    stop = threading.Event()

    def beats() -> None:
        while not stop.wait(handle.heartbeat):
            with contextlib.suppress(Exception):  # a missed beat is retried; grace allows two
                beat(handle, trial)

    thread = threading.Thread(target=beats, name=f"heartbeat-{trial.number}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def marked(trial: Any) -> bool:
    """Whether a worker marked ``trial`` (a frozen trial) as its own: it beat for it first."""
    mark = trial.user_attrs.get(WORKER)
    return isinstance(mark, dict) and mark.get("trial") == trial.number


def fail_lost(handle: Any, unmarked: dict[int, tuple[float, str]]) -> None:
    """Fail the running trials whose worker is lost, and queue each once more.

    ``unmarked`` remembers, across calls, each running trial that nobody had marked: when this worker first saw
    it as it is now, and what it was (trial id -> ``(time.monotonic(), written(trial))``)."""
    import optuna

    if not handle.journal:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fail_stale_trials is "experimental"
            optuna.storages.fail_stale_trials(handle.study)
    running = handle.study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))
    now, clock = time.time(), time.monotonic()
    for trial_id in set(unmarked) - {t._trial_id for t in running}:
        del unmarked[trial_id]
    for trial in running:
        if marked(trial):
            unmarked.pop(trial._trial_id, None)
            if handle.journal and now - _last_beat(trial, now) > handle.grace:
                _fail_and_retry(handle, trial)
        else:
            now_written = written(trial)
            seen, before = unmarked.get(trial._trial_id, (clock, now_written))
            if before != now_written:  # its worker wrote to it since the last look: still claiming it
                seen = clock
            unmarked[trial._trial_id] = (seen, now_written)
            if clock - seen > handle.grace:
                del unmarked[trial._trial_id]
                _fail_and_retry(handle, trial)


def written(trial: Any) -> str:
    """What a claim writes to a trial (a frozen trial), as text to compare: its system and user attributes and
    its values."""
    parts = (trial.system_attrs, trial.user_attrs, trial.params)
    return repr([sorted(part.items(), key=lambda item: item[0]) for part in parts])


def _last_beat(trial: Any, now: float) -> float:
    """The time of a journal trial's last beat (``now`` when it has none of its own yet)."""
    beat = trial.system_attrs.get(BEAT)
    if isinstance(beat, list) and len(beat) == 2 and beat[0] == trial.number:
        return float(beat[1])
    return float(beat) if isinstance(beat, (int, float)) else now  # a float: written before beats named trials


def _fail_and_retry(handle: Any, trial: Any) -> None:
    import optuna

    try:
        failed = handle.storage.set_trial_state_values(trial._trial_id, state=optuna.trial.TrialState.FAIL)
    except optuna.exceptions.UpdateFinishedTrialError:
        failed = False  # another worker failed it first, or its worker finished it meanwhile
    if failed:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # RetryHeartbeatStaleTrialCallback is "experimental"
            retry = optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=1)
        retry(handle.study, handle.storage.get_trial(trial._trial_id))
