"""Workers started together open one new storage at the same moment: each must open it (the losers of the race to
create its tables and Optuna's schema-version row open it again). Real processes, released by one barrier."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

pytest.importorskip("optuna")

PROCESSES = 4
ROUNDS = 3  # without the retry, 9 rounds in 10 had a loser here


def open_at_once(url: str, barrier: object, results: object) -> None:
    from ultra_client.errors import UltraError
    from ultra_client.sweep.storage import open_storage

    barrier.wait()
    try:
        open_storage(url, 1)
        results.put("opened")
    except UltraError as exc:
        results.put(str(exc))


def test_workers_opening_one_new_sqlite_storage_together_all_open_it(tmp_path: Path) -> None:
    import optuna

    from ultra_client.sweep import storage  # imported here first, so the forked processes start level

    context = multiprocessing.get_context("fork")
    for round_ in range(ROUNDS):
        url = f"sqlite:///{tmp_path / f'study{round_}.db'}"
        barrier, results = context.Barrier(PROCESSES), context.Queue()
        processes = [context.Process(target=open_at_once, args=(url, barrier, results)) for _ in range(PROCESSES)]
        for process in processes:
            process.start()
        outcomes = [results.get(timeout=120) for _ in processes]
        for process in processes:
            process.join(timeout=120)
        assert outcomes == ["opened"] * PROCESSES, outcomes
        assert optuna.get_all_study_names(storage.expand_url(url)) == []  # one storage, readable, no study yet


def test_a_grid_study_numbered_in_optunas_shuffled_order_is_refused(tmp_path: Path) -> None:
    """A grid study made before points were claimed in the sweep's order (its identity has no grid order): a trial
    number names another point there, so a worker of this version is refused, saying why."""
    from ultra_client.errors import UltraError
    from ultra_client.sweep.storage import GRID_ORDER, join_study, open_storage

    identity = {"pipeline": "p.yaml", "pipeline_text": "x", "keys": ["a.b"], "space": {"a.b": [1, 2]},
                "method": "grid", "trials": 2, "seed": 42, "metric": "m.v", "minimize": False}  # fmt: skip
    url = f"journal:{tmp_path / 'study.journal'}"
    join_study(open_storage(url, 1), "old", identity)  # as an older version stored it
    with pytest.raises(UltraError, match="shuffled order .* finish the study with the version that made it"):
        join_study(open_storage(url, 1), "old", {**identity, "grid_order": GRID_ORDER})
    join_study(open_storage(url, 1), "new", {**identity, "grid_order": GRID_ORDER})
    join_study(open_storage(url, 1), "new", {**identity, "grid_order": GRID_ORDER})  # the same sweep joins


def test_a_sweep_of_the_same_keys_names_its_values_first_and_then_their_order() -> None:
    """Two keys given in the other order: the message names a value that differs before the order, and says that
    only the order differs when that is all (the grid's points would be numbered in another order)."""
    from ultra_client.sweep.storage import first_difference

    stored = {"pipeline_text": "x", "keys": ["a.top_k", "a.k1"], "space": {"a.top_k": [3], "a.k1": [0.9]},
              "method": "grid", "trials": 1, "metric": "m.v", "minimize": False}  # fmt: skip
    reordered = {**stored, "keys": ["a.k1", "a.top_k"]}
    assert first_difference(stored, {**reordered, "space": {"a.top_k": [3, 5], "a.k1": [0.9]}}) == (
        "a.top_k: the study has [3], this worker [3, 5]"
    )
    assert first_difference(stored, reordered) == (
        "the same keys in another order: the study searches ['a.top_k', 'a.k1'], this worker ['a.k1', 'a.top_k']"
    )
    assert first_difference(stored, {**stored, "keys": ["a.top_k"], "space": {"a.top_k": [3]}}) == (
        "the study searches ['a.top_k', 'a.k1'], this worker ['a.top_k']"
    )
    assert first_difference(stored, dict(stored)) is None
