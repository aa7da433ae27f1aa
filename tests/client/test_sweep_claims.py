"""Which grid point a worker of a shared study claims (``ultra_client/sweep/worker.py``): the next one of its own
block of the slowest key, so that each worker rebuilds an index as seldom as one process would; and a claim that
waits for an earlier trial's point before it can take one, so no point runs twice."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import pytest

from tests.client.test_sweep_lost import join_as_worker
from tests.client.test_sweep_shared import nap_project
from ultra_client.sweep.worker import next_point

optuna = pytest.importorskip("optuna")

# k1 x top_k, the sweep's order (the first key slowest): points 0-2 are k1 0.9, 3-5 k1 1.5
ORDER = list(itertools.product([0.9, 1.5], [3, 5, 10]))


def test_one_worker_claims_in_the_sweeps_order() -> None:
    claimed: list[int] = []
    last = None
    while len(claimed) < len(ORDER):
        last = next_point(ORDER, set(claimed), last, [])
        claimed.append(last)
    assert claimed == [0, 1, 2, 3, 4, 5]
    assert next_point(ORDER, set(range(6)), 2, []) == 0  # every point held: 0, pruned as surplus by the worker


def test_two_workers_keep_to_their_own_blocks() -> None:
    """The second worker's first claim goes to the block nobody runs; each then stays in its block; the one that
    finishes first takes the rest of the other's block from its back, while the other goes on from its front."""
    first = next_point(ORDER, set(), None, [])
    second = next_point(ORDER, {first}, None, [first])
    assert (first, second) == (0, 3)
    one = next_point(ORDER, {0, 3}, 0, [3])
    two = next_point(ORDER, {0, 3, one}, 3, [one])
    assert (one, two) == (1, 4)
    wide = list(itertools.product([0.9, 1.5], [1, 2, 3, 5]))  # blocks 0-3 and 4-7
    held = {0, 1, 2, 3, 4}  # worker one is done with its block; worker two runs point 4
    assert next_point(wide, held, 3, [4]) == 7
    assert next_point(wide, held | {7}, 4, [7]) == 5


def test_a_single_key_grid_is_claimed_in_order() -> None:
    order = [(v,) for v in (5, 50, None)]
    assert next_point(order, {0}, 0, [0]) == 1
    assert next_point(order, set(), None, [1]) == 0


def test_a_later_claim_waits_for_an_earlier_trials_point(toy_project: Path, monkeypatch) -> None:
    """A trial is created before its point is stored. A worker whose trial is numbered after one whose point is not
    stored yet waits; when that point turns out to be the one it drew, its trial is pruned as surplus and it
    claims the next point, so the point is not run twice."""
    project = nap_project(toy_project, 0.2)
    claims = join_as_worker(project, "journal:sw/study.journal", monkeypatch, heartbeat=20)  # not lost meanwhile
    storage, study = claims.handle.storage, claims.study
    earlier = storage.create_new_trial(study._study_id)  # another worker's trial, its point not stored yet
    found: list[object] = []
    waiting = threading.Thread(target=lambda: found.append(claims.next()), daemon=True)
    waiting.start()
    time.sleep(0.5)
    assert waiting.is_alive() and not found  # it waits for the earlier trial's point
    storage.set_trial_system_attr(earlier, "grid_id", 0)  # the point the waiting worker drew
    waiting.join(timeout=60)
    assert not waiting.is_alive()
    trials = {t.number: t for t in study.get_trials()}
    assert trials[1].user_attrs["ultra_skipped"] == "surplus" and trials[1].system_attrs["grid_id"] == 0
    assert found[0].number == 2 and trials[2].system_attrs["grid_id"] == 1
