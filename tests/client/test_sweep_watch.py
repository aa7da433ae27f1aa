"""A worker with nothing to claim waits for the study to change. On a storage in files (a journal file, SQLite in
write-ahead mode) it watches the files that Optuna writes, and looks again as soon as another process writes
there, instead of after its wait. Real storages, written by Optuna from another process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

pytest.importorskip("optuna")
# a trial asked outside Study.optimize on a storage with heartbeats: what the workers do too (worker.Claim.next)
pytestmark = pytest.mark.filterwarnings("ignore:Heartbeat of storage is supposed to be used with Study.optimize")

from ultra_client.sweep.storage import open_storage  # noqa: E402
from ultra_client.sweep.watch import signature, until_changed  # noqa: E402

# writes one finished trial into the study through Optuna, from a process of its own, after a pause
WRITER = textwrap.dedent("""
    import sys, time, optuna
    from ultra_client.sweep.storage import open_storage
    time.sleep(float(sys.argv[2]))
    handle = open_storage(sys.argv[1], 1)
    study = optuna.load_study(study_name="watched", storage=handle.storage)
    trial = study.ask()
    study.tell(trial, 0.5)
""")


def _urls(tmp_path: Path) -> list[str]:
    return [f"journal:{tmp_path / 'study.journal'}", f"sqlite:///{tmp_path / 'study.db'}"]


@pytest.mark.parametrize("kind", [0, 1], ids=["journal", "sqlite"])
def test_the_watched_files_are_the_ones_a_write_changes(tmp_path: Path, kind: int) -> None:
    import optuna

    handle = open_storage(_urls(tmp_path)[kind], 1)
    study = optuna.create_study(storage=handle.storage, study_name="watched", direction="maximize")
    trial = study.ask()
    before = signature(handle.files)
    assert before and all(mark is not None for mark in before[:1])  # the journal or the database exists
    study.tell(trial, 0.25)
    assert signature(handle.files) != before  # SQLite: the commit lands in the -wal file, which is watched


@pytest.mark.parametrize("kind", [0, 1], ids=["journal", "sqlite"])
def test_a_waiting_worker_wakes_when_another_process_writes(tmp_path: Path, kind: int) -> None:
    import optuna

    url = _urls(tmp_path)[kind]
    handle = open_storage(url, 1)
    study = optuna.create_study(storage=handle.storage, study_name="watched", direction="maximize")
    before = signature(handle.files)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, url, "0.5"])
    try:

        async def wait() -> None:
            with anyio.fail_after(120):  # a bound for a hung test, far below the wait itself
                await until_changed(handle.files, before, 3600)

        anyio.run(wait)
    finally:
        writer.wait(timeout=120)
    assert writer.returncode == 0
    assert [t.state for t in study.get_trials()] == [optuna.trial.TrialState.COMPLETE]


def test_without_a_change_the_wait_ends_after_its_time(tmp_path: Path) -> None:
    handle = open_storage(_urls(tmp_path)[0], 1)
    path = handle.files[0]
    path.write_text("unchanged\n", encoding="utf-8")
    before = signature(handle.files)

    async def wait() -> None:
        with anyio.fail_after(120):
            await until_changed(handle.files, before, 0.05)

    anyio.run(wait)
    assert signature(handle.files) == before


def test_a_database_server_has_no_files_to_watch() -> None:
    from ultra_client.sweep.storage import StudyHandle

    handle = StudyHandle(None, None, "postgresql+psycopg://u:${P}@h/db", 10, 30)
    assert handle.files == () and signature(handle.files) == ()
