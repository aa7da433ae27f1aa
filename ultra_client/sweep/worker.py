"""One worker of a shared study: claim a trial through Optuna's storage, run it, tell the study; until none is left.

Claims go through the storage, so workers on any machines never run one point twice:

* a grid is Optuna's ``GridSampler`` over each key's value positions, in the sweep's order (the first key
  slowest): a trial takes an unclaimed point, the one nearest the worker's last (``next_point``); a trial that
  drew a point another (lower-numbered) trial holds is pruned unrun (marked ``surplus``) and the worker asks
  again, once every lower-numbered trial's point is stored;
* ``--random N`` / ``--bayes N`` (``RandomSampler``, ``TPESampler(constant_liar=True)``) count the study's trials:
  a trial numbered past the first N is pruned unrun, and one repeating another's values too (``repeat``). A lost
  trial whose retry was pruned unrun holds no point and no slot (``excused``): it would have been pruned itself.

A running trial's worker beats every ``heartbeat`` seconds; a trial whose worker is lost (silent for ``grace``
seconds, or never marked as claimed: ``beats.py``) is failed by whichever worker looks next, and Optuna's
``RetryHeartbeatStaleTrialCallback(max_retry=1)`` queues it once more (a waiting trial, asked first). A retry is
judged as the trial it replaces: run unless that one would have been pruned unrun. A worker with nothing left to
claim waits while others run, so a lost trial is retried while any worker lives. A worker that was only stalled
(a loaded machine) finishes the trial it was failed for, says so and goes on: its retry, claimed after that,
finds the finished folder and does not run the point again.
"""

from __future__ import annotations

import fcntl
import math
import os
import time
import warnings
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ultra_client.sweep.beats import HOST, claim, fail_lost, heartbeat
from ultra_client.sweep.search import canonical
from ultra_client.sweep.trials import TrialStore, fingerprint, record_trial, say, skipped_folders, trial_settings
from ultra_client.sweep.watch import signature, until_changed

ATTR = "ultra"  # the trial's user attribute: its record (status, values, results, folder on its host)
MARK = "ultra_skipped"  # the user attribute of a trial pruned unrun: "surplus" or "repeat"
MAX_REPEATS = 100  # proposals in a row that repeat a trial's values before a random or Bayesian worker stops
# between looks at the study while others run the last trials: the first wait, then doubling up to the last
# (a database server shared by many machines: two queries a second per waiting worker at most; a storage in files
# on this machine is watched meanwhile, and looked at as soon as it is written: watch.until_changed)
WAIT_SECONDS = (0.05, 0.5)
PLACING_SECONDS = 0.005  # between looks while an earlier trial's point is being stored
PER_WORKER_SETTINGS = ("index_path",)  # built state: each worker on a machine keeps its own copy


class Claim:
    """Asks the study for this worker's next trial, or says to wait or stop."""

    def __init__(self, spec: Any, handle: Any, slot: int) -> None:
        import optuna

        self.optuna = optuna
        self.spec = spec
        self.handle = handle
        self.slot = slot
        self.unmarked: dict[int, tuple[float, str]] = {}  # running trials nobody marked yet: see beats.fail_lost
        self.study = handle.study
        self.states = optuna.trial.TrialState
        self.distributions = {s.key: _distribution(optuna, s.values) for s in spec.spaces}
        self.repeats = 0
        if spec.method == "grid":
            self.study.sampler = claimed_grid({s.key: list(range(len(s.values))) for s in spec.spaces})
        elif spec.method == "random":
            self.study.sampler = optuna.samplers.RandomSampler()
        else:
            startup = max(2, min(10, spec.total // 3))
            self.study.sampler = optuna.samplers.TPESampler(n_startup_trials=startup, constant_liar=True)

    def trials(self) -> list[Any]:
        return self.study.get_trials(deepcopy=False)

    def next(self) -> Any:
        """A trial to run, ``"wait"`` (others run, a lost one may come back) or None (the study is done)."""
        while True:
            fail_lost(self.handle, self.unmarked)
            trials = self.trials()
            waiting = any(t.state == self.states.WAITING for t in trials)
            if not waiting and not self._open(trials):
                return "wait" if any(t.state == self.states.RUNNING for t in trials) else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "heartbeat is supposed to be used with Study.optimize"
                trial = self.study.ask(self.distributions)
            try:
                claim(self.handle, trial, self.slot)  # at once: beat, then mark it as this worker's
            except self.optuna.exceptions.UpdateFinishedTrialError:
                continue  # this worker stalled so long that another failed the trial as lost
            frozen = self.handle.storage.get_trial(trial._trial_id)
            skip = self._skip(frozen, frozen.system_attrs.get("failed_trial", frozen.number))
            if skip is None:
                self.repeats = 0
                return trial
            trial.set_user_attr(MARK, skip)
            self.study.tell(trial, state=self.states.PRUNED)  # then ask again: the next look sees what is left
            if skip == "repeat":
                self.repeats += 1
                if self.repeats >= MAX_REPEATS:
                    say(f"{MAX_REPEATS} proposals in a row repeated earlier trials: this worker stops asking")
                    return None

    def _open(self, trials: list[Any]) -> bool:
        """Whether a fresh trial may still be claimed: an unclaimed grid point, or budget left."""
        counted = holding(trials)
        if self.spec.method == "grid":
            return len(held_points(counted)) < self.spec.total
        return len(counted) < self.spec.total

    def _skip(self, frozen: Any, number: int) -> str | None:
        """``surplus`` or ``repeat`` for a trial (as stored) that must not run, else None. ``number`` is the
        trial's own, or for a retry the lost trial's: a worker lost as it claimed a trial (before it could prune
        it) leaves a retry that must be pruned as that trial would have been."""
        if self.spec.method == "grid":
            point = frozen.system_attrs.get("grid_id")
            return "surplus" if any(t.system_attrs.get("grid_id") == point for t in self._placed(number)) else None
        earlier = self._earlier(number)
        if len(earlier) >= self.spec.total:
            return "surplus"
        mine = canonical(frozen.params)
        return "repeat" if any(canonical(t.params) == mine for t in earlier if t.params) else None

    def _earlier(self, number: int) -> list[Any]:
        """The trials numbered below ``number`` that hold a point or a slot (``holding``), as stored now."""
        return [t for t in holding(self.trials()) if t.number < number]

    def _placed(self, number: int) -> list[Any]:
        """The trials numbered below ``number`` that hold a point, once each has its point: a trial is created
        before the sampler stores its point, so a later one waits those few milliseconds (or until a lost one
        is failed) and cannot take a point an earlier one is about to store."""
        while True:
            earlier = self._earlier(number)
            if not any(t.state == self.states.RUNNING and "grid_id" not in t.system_attrs for t in earlier):
                return earlier
            fail_lost(self.handle, self.unmarked)
            time.sleep(PLACING_SECONDS)


def holding(trials: list[Any]) -> list[Any]:
    """The trials that hold their point and a slot of the budget: not pruned unrun, not a retry (which holds its
    lost trial's), and not a lost trial whose retry was pruned unrun (it would have been pruned itself, had its
    worker lived to judge it: a surplus or a repeat)."""
    gone = excused(trials)
    return [t for t in trials if MARK not in t.user_attrs and "failed_trial" not in t.system_attrs
            and t.number not in gone]  # fmt: skip


def held_points(trials: list[Any]) -> set[int]:
    """The grid points ``trials`` (those ``holding`` them) hold: each one's stored ``grid_id``."""
    return {t.system_attrs["grid_id"] for t in trials if "grid_id" in t.system_attrs}


def excused(trials: list[Any]) -> set[int]:
    """The numbers of lost trials whose retry was pruned unrun: as if pruned unrun themselves (no row, no slot)."""
    return {t.system_attrs["failed_trial"] for t in trials if MARK in t.user_attrs and "failed_trial" in t.system_attrs}


def claimed_grid(search: dict[str, list[int]]) -> Any:
    """Optuna's grid sampler over ``search``, with its points in the sweep's order (the first key slowest) and two
    changes: a fresh trial takes the point ``next_point`` chooses for this worker, instead of point n for trial n
    or a random one; and the worker decides when the study is done (``after_trial`` would call ``study.stop()``,
    which only an ``optimize`` loop allows)."""
    import itertools

    import optuna

    running = optuna.trial.TrialState.RUNNING

    class ClaimedGrid(optuna.samplers.GridSampler):
        def __init__(self) -> None:
            super().__init__(search, seed=0)
            keys = list(search)  # Optuna's points hold the values in sorted key order
            self.order = list(itertools.product(*search.values()))
            self._all_grids = [tuple(point[keys.index(name)] for name in self._param_names) for point in self.order]
            self.last: int | None = None  # this worker's last point

        def before_trial(self, study: Any, trial: Any) -> None:
            if "grid_id" in trial.system_attrs or "fixed_params" in trial.system_attrs:
                return  # a retry: its lost trial's point
            # written first: a claim's writes show the other workers it is under way (beats.fail_lost)
            study._storage.set_trial_system_attr(trial._trial_id, "search_space", self._search_space)
            trials = study.get_trials(deepcopy=False)
            held = held_points(holding(trials))
            others = [t.system_attrs["grid_id"] for t in trials
                      if t.state == running and t.number != trial.number and "grid_id" in t.system_attrs]  # fmt: skip
            self.last = next_point(self.order, held, self.last, others)
            study._storage.set_trial_system_attr(trial._trial_id, "grid_id", self.last)

        def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
            return None

    return ClaimedGrid()


def next_point(order: list[tuple], held: set[int], last: int | None, others: list[int]) -> int:
    """The grid point (a position in ``order``) a worker claims next, of those no trial holds: the first that
    shares the most leading values (of every key but the last) with the worker's ``last`` point, so that a setting
    which rebuilds state, such as an index, changes as seldom on each worker as in one process; among points no
    nearer to it, those sharing the fewest with the points ``others`` run (so the workers' first claims spread
    over the slowest key), taken from the back of a block another worker runs, whose front that worker takes.
    Every point held: point 0, which the worker then prunes as surplus."""

    def shared(a: int, b: int) -> int:
        count = 0
        for x, y in zip(order[a][:-1], order[b][:-1], strict=True):
            if x != y:
                break
            count += 1
        return count

    def rank(n: int) -> tuple[int, int, int]:
        mine = shared(n, last) if last is not None else 0
        near = max((shared(n, o) for o in others), default=0)
        return -mine, near, n if mine >= near else -n

    free = [n for n in range(len(order)) if n not in held]
    return min(free, key=rank) if free else 0


def _distribution(optuna: Any, values: Any) -> Any:
    from ultra_client.sweep.search import _distribution as distribution

    return distribution(optuna, values)


def decode(spec: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The trial's ``{key: value}``: a list's position becomes its value, a range's number stays."""
    return {s.key: s.values[params[s.key]] if isinstance(s.values, list) else params[s.key] for s in spec.spaces}


def worker_slot(output_dir: Path) -> tuple[int, Any]:
    """The lowest free worker number on this machine for ``output_dir`` (a lock held while the process lives)."""
    folder = output_dir / "workers"
    folder.mkdir(parents=True, exist_ok=True)
    number = 1
    while True:
        handle = open(folder / f"{HOST}-{number}.lock", "a")  # noqa: SIM115 - held until the process ends
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return number, handle
        except OSError:
            handle.close()
            number += 1


def per_worker(settings: dict[str, dict[str, Any]], slot: int) -> dict[str, dict[str, Any]]:
    """Each ``index_path`` with ``/worker-<slot>`` appended: two workers rebuilding one index would read each
    other's."""
    return {
        alias: {
            key: f"{value.rstrip('/')}/worker-{slot}"
            if key in PER_WORKER_SETTINGS and isinstance(value, str)
            else value
            for key, value in values.items()
        }
        if isinstance(values, dict)
        else values
        for alias, values in settings.items()
    }


async def run_worker(spec: Any, handle: Any, runner: Any, raw: dict, target: Path, idle: Any = None) -> int:
    """Claim and run trials until the study is done; the number of trials this worker ran. ``idle`` (if given) is
    called once, the first time this worker has nothing to claim while others still run trials."""
    slot, lock = worker_slot(spec.output_dir)
    claims = Claim(spec, handle, slot)
    store = TrialStore(spec.output_dir)
    skip = skipped_folders(spec.output_dir)
    say(f"worker {HOST}-{slot} (pid {os.getpid()}) joined study '{handle.study.study_name}' in {handle.shown}")
    ran = 0
    first, most = WAIT_SECONDS
    wait = first
    try:
        while True:
            await anyio.lowlevel.checkpoint()
            clock = time.perf_counter()
            before = signature(handle.files)  # before the look: a write during it ends the wait at once
            trial = await anyio.to_thread.run_sync(claims.next)
            if trial == "wait":
                if idle is not None:
                    idle, warm = None, idle
                    warm()
                await until_changed(handle.files, before, wait)
                wait = min(2 * wait, most)
                continue
            wait = first
            if trial is None:
                break
            claimed = time.perf_counter() - clock  # the storage's share: the claim, its beat and its mark
            with heartbeat(handle, trial):  # from here: hashing a large corpus for the fingerprint takes a while
                values = decode(spec, trial.params)
                settings = trial_settings(raw, values)
                fp = fingerprint(runner.pipeline_text, settings, skip)
                record = store.finished(fp)
                if record is None:
                    folder = store.fresh(fp)
                    record = await runner.run(folder, per_worker(settings, slot), target)
                    record.update(fingerprint=fp, values=values, folder=str(folder.resolve()))
                    record.update(study=handle.study.study_name, trial_number=trial.number, host=HOST, pid=os.getpid())
                    _fail_on_non_finite(spec, record, trial.number)
                    record_trial(folder, record)
                    ran += 1
                    outcome = "ok" if record["status"] == "ok" else f"FAILED ({_first_line(record.get('error'))})"
                else:
                    outcome = "finished before, not run again"
                say(f"trial {trial.number}: {', '.join(f'{k}={v}' for k, v in values.items())}: {outcome}")
                try:
                    _tell(claims, trial, record, claimed)
                except claims.optuna.exceptions.UpdateFinishedTrialError:
                    say(f"trial {trial.number}: failed as lost while this worker ran it (no beat reached the "
                        f"storage for {handle.grace} s: a stalled machine?); a retry claimed from now on reuses "
                        "its folder")  # fmt: skip
    finally:
        lock.close()
    return ran


def _fail_on_non_finite(spec: Any, record: dict[str, Any], number: int) -> None:
    value = record.get("non_finite", {}).get(spec.metric) if spec.metric else None
    if record["status"] == "ok" and value is not None:
        record.update(status="failed", error=f"trial {number}: {spec.metric} = {value}, not a finite number")


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else "no message"


def _tell(claims: Claim, trial: Any, record: dict[str, Any], claimed: float) -> None:
    """Store where the trial's results are and what they were, then tell the study its metric (or failure).

    ``storage_seconds`` is the time the storage took for this trial: claiming it, and storing its record (the
    ``tell`` after it is not included)."""
    clock = time.perf_counter()
    spec = claims.spec
    metric = record.get("results", {}).get(spec.metric) if record["status"] == "ok" else None
    kept = {name: record.get(name) for name in ("status", "error", "values", "results", "wall_seconds", "tool_seconds")}
    kept.update(fingerprint=record["fingerprint"], folder=record["folder"], host=record.get("host", HOST))
    kept["per_query"] = (
        {spec.metric: record["per_query"][spec.metric]} if spec.metric in record.get("per_query", {}) else {}
    )
    trial.set_user_attr(ATTR, {**kept, "storage_seconds": round(claimed + time.perf_counter() - clock, 4)})
    if isinstance(metric, (int, float)) and math.isfinite(metric):
        claims.study.tell(trial, float(metric))
    else:
        claims.study.tell(trial, state=claims.states.FAIL)
