"""Shared sweep studies through real worker processes: three workers on a real PostgreSQL and on a real MariaDB
(MySQL), ``--workers 2`` on SQLite and on a journal file. A worker is SIGKILLed mid-trial in each; the tests check
that no grid point ran twice, that the lost trial was retried, that the best trial is a one-process sweep's, and
that ``--status`` matches the storage. Each trial naps 0.5 s (the toy server) before an evaluate_trec on data/trec,
so a kill lands mid-trial (the kill looks for a running trial every 0.05 s)."""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_ultra
from tests.support import mysql, postgres

optuna = pytest.importorskip("optuna")

TREC = ROOT / "data" / "trec"
GRID = ["--grid", "evaluation.relevance_level=[1, 2]", "--grid", "evaluation.max_depth=[5, 50, null]"]
POINTS = 6
SWEEP = ["sweep", "pipes/nap.yaml", *GRID, "--metric", "eval_res.map", "--heartbeat", "1"]
PIPELINE = (
    "servers:\n  toy: toyservers/toy\n  evaluation: servers/evaluation\n"
    "pipeline:\n  - toy.nap\n  - evaluation.evaluate_trec\n"
)
WAIT = 240  # seconds: generous bounds on a shared 2-core machine; the tests poll, they assert no timing


@pytest.fixture
def project(toy_project: Path) -> Path:
    return nap_project(toy_project, 0.5)


def nap_project(toy_project: Path, seconds: float) -> Path:
    """``pipes/nap.yaml`` (a nap of ``seconds``, then evaluate_trec on data/trec) and its parameter file."""
    (toy_project / "pipes" / "nap.yaml").write_text(PIPELINE, encoding="utf-8")
    (toy_project / "pipes" / "parameters").mkdir()
    evaluation = {
        "run_path": str(TREC / "results.test"),
        "qrels_path": str(TREC / "qrels.test"),
        "ir_metrics": ["map", "ndcg"],
        "ks": [5],
        "relevance_level": 1,
        "max_depth": None,
        "save_path": "results",
    }
    params = {"toy": {"seconds": seconds}, "evaluation": evaluation}
    (toy_project / "pipes" / "parameters" / "nap_parameter.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    return toy_project


@pytest.fixture(scope="module")
def one_process_best(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, float]:
    """The best trial's values and metric of the same grid swept in one process, without storage (naps of 0 s)."""
    import shutil

    from tests.client.conftest import TOY_SOURCE

    folder = tmp_path_factory.mktemp("one")
    shutil.copytree(TOY_SOURCE, folder / "toyservers" / "toy")
    (folder / "pipes" / "parameters").mkdir(parents=True)
    (folder / "pipes" / "nap.yaml").write_text(PIPELINE, encoding="utf-8")
    params = {"toy": {"seconds": 0.0}, "evaluation": {"run_path": str(TREC / "results.test"),
              "qrels_path": str(TREC / "qrels.test"), "ir_metrics": ["map", "ndcg"], "ks": [5],
              "relevance_level": 1, "max_depth": None, "save_path": "results"}}  # fmt: skip
    (folder / "pipes" / "parameters" / "nap_parameter.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    env = {"ULTRA_READ_ROOTS": os.pathsep.join([str(folder), str(ROOT)]), "ULTRA_ALLOW_OUTSIDE_OUTPUT": "1"}
    done = run_ultra(*SWEEP[:-2], "--output-dir", "one", cwd=folder, env=env)
    assert done.returncode == 0, done.stderr
    best = next(r for r in json.loads((folder / "one" / "sweep.json").read_text())["rows"] if r["best"])
    return {"evaluation.relevance_level": best["evaluation.relevance_level"],
            "evaluation.max_depth": best["evaluation.max_depth"]}, best["eval_res.map"]  # fmt: skip


def start(project: Path, *args: str, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, str(ROOT / "ultra.py"), *args], cwd=project, env=full,
                                stdout=out, stderr=subprocess.STDOUT)  # fmt: skip


def kill_mid_trial(study: optuna.Study, processes: list[subprocess.Popen], spare: int | None = None) -> int:
    """SIGKILL the worker of the trial that started last while it runs (not the process ``spare``: with
    ``--workers N``, the command itself is worker 1); that trial's number."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        running = [
            t for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))
            if "ultra_worker" in t.user_attrs and "ultra" not in t.user_attrs
            and t.user_attrs["ultra_worker"]["pid"] != spare
        ]  # fmt: skip
        if running:
            victim = max(running, key=lambda t: t.datetime_start)
            os.kill(victim.user_attrs["ultra_worker"]["pid"], signal.SIGKILL)
            return victim.number
        assert all(p.poll() is None for p in processes), "a worker ended before any trial ran"
        time.sleep(0.05)
    raise AssertionError("no trial was seen running")


def check_study(study: optuna.Study, killed: int, project: Path, best: tuple[dict, float]) -> None:
    trials = [t for t in study.get_trials() if "ultra_skipped" not in t.user_attrs]
    done = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    points = [json.dumps(t.user_attrs["ultra"]["values"], sort_keys=True) for t in done]
    assert len(done) == POINTS and len(set(points)) == POINTS  # every point once, none twice
    lost = next(t for t in trials if t.number == killed)
    assert lost.state == optuna.trial.TrialState.FAIL and "ultra" not in lost.user_attrs
    retries = [t for t in done if t.system_attrs.get("failed_trial") == killed]
    assert len(retries) == 1 and retries[0].params == lost.params  # retried once, same point
    assert len(trials) == POINTS + 1  # nothing else ran
    best_trial = study.best_trial
    assert best_trial.user_attrs["ultra"]["values"] == best[0] and best_trial.value == pytest.approx(best[1])
    records = [json.loads(p.read_text()) for p in (project / "sw").glob("trials/*/trial.json")]
    assert sorted(r["trial_number"] for r in records) == sorted(t.number for t in done)
    assert all(r["host"] == os.uname().nodename and r["study"] == study.study_name for r in records)
    folders = {t.user_attrs["ultra"]["folder"] for t in done}
    assert folders == {r["folder"] for r in records}


def check_status(ultra, project: Path, storage: str, name: str, study: optuna.Study) -> None:
    """``ultra sweep --status`` in this process (``ultra``: the fixture; test_sweep_lost.py runs it as a subprocess)
    shows the storage's counts and best trial."""
    shown = ultra("sweep", "--status", "--storage", storage, "--study", name, cwd=project)
    assert shown.returncode == 0, shown.stderr
    states = [t.state for t in study.get_trials() if "ultra_skipped" not in t.user_attrs]
    done, failed = states.count(optuna.trial.TrialState.COMPLETE), states.count(optuna.trial.TrialState.FAIL)
    assert f"trials: {done} done, {failed} failed, 0 running, 0 waiting" in shown.stdout
    best = re.search(r"best so far: trial (\d+) .*eval_res.map = ([0-9.e-]+), 95% interval ([0-9.e-]+) to ([0-9.e-]+)",
                     shown.stdout)  # fmt: skip
    assert best, shown.stdout
    assert int(best.group(1)) == study.best_trial.number
    assert float(best.group(2)) == pytest.approx(study.best_value, rel=1e-3)
    assert float(best.group(3)) <= study.best_value <= float(best.group(4))


def wait_all(processes: list[subprocess.Popen]) -> list[int]:
    return [p.wait(timeout=WAIT) for p in processes]


SERVERS = {  # a real database server each, started by its fixture; the Python driver the URL names
    "postgresql": (postgres, "psycopg", "pip install -e '.[sweep]' brings psycopg"),
    "mysql": (mysql, "pymysql", "pip install -e '.[sweep]' brings pymysql"),
}


@pytest.mark.parametrize("kind", list(SERVERS))
def test_three_workers_share_one_study_on_a_database_server(
    project: Path, kind: str, tmp_path_factory, one_process_best, ultra, monkeypatch
) -> None:
    support, driver, hint = SERVERS[kind]
    if support.binaries() is None:
        pytest.skip(support.INSTALL)
    pytest.importorskip(driver, reason=hint)
    password = "pw-" + secrets.token_hex(12)
    env = {"ULTRA_TEST_DB_PASSWORD": password}
    logs = tmp_path_factory.mktemp("logs")
    with support.server(password) as server:
        url = server.url("${ULTRA_TEST_DB_PASSWORD}")
        args = [*SWEEP, "--output-dir", "sw", "--storage", url, "--study", "pg", "--no-report"]
        storage = optuna.storages.RDBStorage(url.replace("${ULTRA_TEST_DB_PASSWORD}", password))  # its tables
        first = start(project, *args, log=logs / "w0.log", env=env)
        deadline = time.monotonic() + WAIT
        while "pg" not in optuna.get_all_study_names(storage) and time.monotonic() < deadline:
            time.sleep(0.1)  # the first worker creates the study; the others join it
        workers = [first] + [start(project, *args, log=logs / f"w{n}.log", env=env) for n in (1, 2)]
        study = optuna.load_study(study_name="pg", storage=storage)
        killed = kill_mid_trial(study, workers)
        codes = wait_all(workers)
        assert sorted(codes) == [-signal.SIGKILL, 0, 0], [p.read_text() for p in logs.iterdir()]
        check_study(study, killed, project, one_process_best)
        monkeypatch.setenv("ULTRA_TEST_DB_PASSWORD", password)  # the workers' environment, for the in-process status
        check_status(ultra, project, url, "pg", study)
        report = run_ultra("sweep", "--report", "--storage", url, "--study", "pg", "--output-dir", "rep",
                           cwd=project, env=env)  # fmt: skip
        assert report.returncode == 0, report.stderr
        rows = json.loads((project / "rep" / "sweep.json").read_text())["rows"]
        assert len(rows) == POINTS + 1 and rows[0]["best"] and rows[0]["trial"] == study.best_trial.number
        assert "worker stopped beating" in next(r["error"] for r in rows if r["trial"] == killed)
        texts = [report.stdout, report.stderr, *(p.read_text() for p in logs.iterdir())]
    files = [p for p in project.rglob("*") if p.is_file() and password.encode() in p.read_bytes()]
    assert files == [] and not any(password in text for text in texts)


def journal(path: Path) -> optuna.storages.JournalStorage:
    return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(path)))


def test_one_local_worker_claims_the_grid_in_the_sweeps_order(toy_project: Path) -> None:
    """``--workers 1`` (a journal file in the sweep folder): trial n is the grid's point n in the sweep's order,
    the first key slowest, as a one-process sweep runs them (Optuna's grid sampler shuffles them). No worker is
    killed here, so the trials need no nap."""
    project = nap_project(toy_project, 0.0)
    done = run_ultra(*SWEEP, "--output-dir", "sw", "--workers", "1", cwd=project, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    study = optuna.load_study(study_name="nap", storage=journal(project / "sw" / "study.journal"))
    values = [t.user_attrs["ultra"]["values"] for t in sorted(study.get_trials(), key=lambda t: t.number)]
    assert [(v["evaluation.relevance_level"], v["evaluation.max_depth"]) for v in values] == [
        (1, 5), (1, 50), (1, None), (2, 5), (2, 50), (2, None)
    ]  # fmt: skip
    assert not (project / "sw" / "study.db").exists()


def study_exists(store: object, name: str) -> bool:
    """Whether the study is there yet; False while the workers are still creating the storage's tables."""
    try:
        return name in optuna.get_all_study_names(store)
    except Exception:  # noqa: BLE001 - sqlalchemy's OperationalError while the tables are being made
        return False


@pytest.mark.parametrize("storage", ["sqlite", "journal"])
def test_two_local_workers_share_one_study(
    project: Path, storage: str, tmp_path: Path, one_process_best, ultra
) -> None:
    given = ["--storage", "sqlite:///sw/study.db"] if storage == "sqlite" else []  # a journal file by default
    parent = start(project, *SWEEP, "--output-dir", "sw", "--workers", "2", *given, log=tmp_path / "parent.log")
    path = project / "sw" / ("study.journal" if storage == "journal" else "study.db")
    deadline = time.monotonic() + WAIT
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    if storage == "journal":
        backend = optuna.storages.journal.JournalFileBackend(str(path))
        url, store = "journal:sw/study.journal", optuna.storages.JournalStorage(backend)
    else:
        url = store = f"sqlite:///{path}"
    while not study_exists(store, "nap") and time.monotonic() < deadline:
        time.sleep(0.1)
    study = optuna.load_study(study_name="nap", storage=store)
    killed = kill_mid_trial(study, [parent], spare=parent.pid)
    assert parent.wait(timeout=WAIT) == 0, (tmp_path / "parent.log").read_text()
    output = (tmp_path / "parent.log").read_text()
    assert "worker 2 exited with -9" in output
    check_study(study, killed, project, one_process_best)
    check_status(ultra, project, url, "nap", study)
    rows = json.loads((project / "sw" / "sweep.json").read_text())["rows"]
    assert len(rows) == POINTS + 1 and rows[0]["trial"] == study.best_trial.number


def test_a_worker_with_another_sweep_is_refused(project: Path) -> None:
    (project / "pipes" / "parameters" / "nap_parameter.yaml").write_text(
        yaml.safe_dump({"toy": {"seconds": 0.0}, "evaluation": {"run_path": str(TREC / "results.test"),
                        "qrels_path": str(TREC / "qrels.test"), "ir_metrics": ["map"], "ks": [5],
                        "relevance_level": 1, "max_depth": None, "save_path": "results"}}),
        encoding="utf-8",
    )  # fmt: skip
    shared = ["--storage", "sqlite:///sw/study.db", "--study", "s", "--output-dir", "sw"]
    base = ["sweep", "pipes/nap.yaml", "--metric", "eval_res.map", *shared, "--grid", "evaluation.max_depth=[5, 50]"]
    first = run_ultra(*base, "--no-report", cwd=project)  # the study the others are checked against; no table
    assert first.returncode == 0, first.stderr
    other = run_ultra(*base[:-1], "evaluation.max_depth=[5, 60]", cwd=project)
    assert other.returncode == 1 and "Traceback" not in other.stderr
    assert "evaluation.max_depth: the study has [5, 50], this worker [5, 60]" in other.stderr
    (project / "pipes" / "nap.yaml").write_text(PIPELINE.replace("  - toy.nap\n", "  - toy.nap   # changed\n"))
    changed = run_ultra(*base, cwd=project)
    assert changed.returncode == 1 and "its pipeline differs at line 5" in changed.stderr
    assert not list((project / "sw").glob("logs/restart_*"))  # refused before any server started


def test_a_literal_password_is_refused_and_not_shown(project: Path) -> None:
    url = "postgresql+psycopg://ultra:hunter2-literal@127.0.0.1:9/db"
    done = run_ultra(*SWEEP, "--storage", url, "--study", "s", cwd=project)
    assert done.returncode == 1 and "write ${VAR} instead" in done.stderr
    assert "hunter2" not in done.stderr + done.stdout


def test_random_trials_bound_the_whole_study(project: Path) -> None:
    """--random 4 with two workers: four trials in the study in all, four distinct draws, none pruned unrun
    that was counted; the table holds them."""
    params = yaml.safe_load((project / "pipes" / "parameters" / "nap_parameter.yaml").read_text())
    params["toy"]["seconds"] = 0.2
    (project / "pipes" / "parameters" / "nap_parameter.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    space = ["--grid", "evaluation.max_depth={low: 1, high: 1000}", "--random", "4"]
    done = run_ultra("sweep", "pipes/nap.yaml", *space, "--metric", "eval_res.map", "--workers", "2",
                     "--output-dir", "sw", cwd=project, timeout=WAIT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    study = optuna.load_study(study_name="nap", storage=journal(project / "sw" / "study.journal"))
    counted = [t for t in study.get_trials() if "ultra_skipped" not in t.user_attrs]
    assert len(counted) == 4 and all(t.state == optuna.trial.TrialState.COMPLETE for t in counted)
    assert len({t.params["evaluation.max_depth"] for t in counted}) == 4
    assert len(json.loads((project / "sw" / "sweep.json").read_text())["rows"]) == 4
