"""A sweep's shared study: Optuna's storage from ``--storage URL``, and the study that every worker joins.

The URL takes Optuna's forms: ``postgresql+psycopg://``, ``mysql+pymysql://``, ``sqlite:///PATH`` (Optuna's
``RDBStorage``) or ``journal:PATH`` (``JournalStorage`` on a ``JournalFileBackend``). A password is written
``${VAR}`` and read from the environment; a literal one is refused, and the expanded URL is never printed
(messages show the URL as given, and any text from the database driver is redacted).

The study holds the sweep it was created for (``IDENTITY``: the pipeline, the search space and the objective);
a worker whose sweep differs is refused with the first difference.
"""

from __future__ import annotations

import fcntl
import os
import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ultra_base.variable_counts import ENV_REFERENCE
from ultra_client.errors import UltraError

IDENTITY = "ultra_sweep"  # the study's user attribute holding the sweep it runs
GRID_ORDER = "first key slowest"  # how a grid study numbers its points (worker.claimed_grid); older ones shuffled
SCHEMES = ("postgresql+psycopg://", "mysql+pymysql://", "sqlite:///", "journal:")
# what a worker meets when another creates the same new storage at the same moment (its tables, then Optuna's
# schema version row): SQLite, MySQL/MariaDB and PostgreSQL's words; the loser opens the storage again
CREATION_RACES = ("already exists", "UNIQUE constraint failed", "Duplicate entry", "duplicate key value")
ATTEMPTS = 5
_URL = re.compile(r"^(?P<scheme>[a-z0-9+]+)://(?:(?P<user>[^:@/]*)(?::(?P<password>[^@/]*))?@)?(?P<rest>.*)$")


@dataclass
class StudyHandle:
    """The opened storage and study, and how to show the URL (as given: ``${VAR}`` unexpanded)."""

    storage: Any
    study: Any
    shown: str
    heartbeat: int  # seconds between a running trial's heartbeats
    grace: int  # seconds without a heartbeat after which a running trial is failed (and retried once)
    files: tuple[Path, ...] = ()  # a storage in files on this machine: each write changes one of them

    @property
    def journal(self) -> bool:
        return self.shown.startswith("journal:")


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise UltraError("--storage needs Optuna: pip install -e '.[sweep]'") from None
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    return optuna


def expand_url(url: str) -> str:
    """The URL with its ``${VAR}`` expanded (remembered as secrets); a literal password is refused."""
    from ultra_base.errors import InputError
    from ultra_base.redact import remember
    from ultra_kit.settings import expand_env

    if not url.startswith(SCHEMES):
        raise UltraError(
            f"--storage {url}: expected one of {', '.join(s + '...' for s in SCHEMES)} "
            "(e.g. sqlite:///output/study.db or journal:output/study.journal)"
        )
    match = _URL.match(url)
    password = match.group("password") if match else None
    if password and ENV_REFERENCE.sub("", password):
        raise UltraError(
            "--storage: the URL holds a password; put it in an environment variable and write "
            "${VAR} instead, e.g. postgresql+psycopg://user:${PGPASSWORD}@host/db"
        )
    try:
        if match and password:
            secret = expand_env(password)
            remember(quote(secret, safe=""))
            head = f"{match.group('scheme')}://{expand_env(match.group('user') or '')}:{quote(secret, safe='')}@"
            return head + expand_env(match.group("rest"))
        return expand_env(url)
    except InputError as exc:
        raise UltraError(f"--storage: {exc}") from None


def open_storage(url: str, heartbeat: int) -> StudyHandle:
    """Optuna's storage for ``url``: heartbeats every ``heartbeat`` seconds, a trial without one for three times
    that is failed and retried once (``RetryHeartbeatStaleTrialCallback(max_retry=1)``)."""
    optuna = _optuna()
    grace = 3 * heartbeat
    full = expand_url(url)
    files: tuple[Path, ...] = ()
    try:
        if full.startswith("journal:"):
            path = Path(full.removeprefix("journal:")).expanduser().resolve()
            path.parent.mkdir(parents=True, exist_ok=True)
            files = (path,)
            backend = optuna.storages.journal.JournalFileBackend(str(path), lock_obj=FileLock(f"{path}.flock"))
            storage = optuna.storages.JournalStorage(backend)
        else:
            if full.startswith("sqlite:///"):
                database = Path(full.removeprefix("sqlite:///")).expanduser()
                database.parent.mkdir(parents=True, exist_ok=True)
                files = (database, Path(f"{database}-wal"))  # write-ahead mode: commits land in the -wal file
            engine = {"connect_args": {"timeout": 60}} if full.startswith("sqlite") else {"pool_pre_ping": True}
            for attempt in range(ATTEMPTS):  # workers started together race to create the tables: losers retry
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # heartbeat_interval is "experimental"
                        storage = optuna.storages.RDBStorage(
                            full,
                            engine_kwargs=engine,
                            heartbeat_interval=heartbeat,
                            grace_period=grace,
                            heartbeat_stale_trial_callback=optuna.storages.RetryHeartbeatStaleTrialCallback(
                                max_retry=1
                            ),
                        )
                    break
                except Exception as exc:  # noqa: BLE001 - sqlalchemy's errors, not imported here
                    if not any(race in str(exc) for race in CREATION_RACES) or attempt == ATTEMPTS - 1:
                        raise
                    time.sleep(0.2)
            if full.startswith("sqlite"):
                _write_ahead(storage.engine)
    except Exception as exc:  # the driver's errors (connection refused, bad database, missing module)
        raise UltraError(f"--storage {url}: cannot open it: {_driver_message(exc)}") from None
    return StudyHandle(storage, None, url, heartbeat, grace, files)


class FileLock:
    """The journal file's lock for Optuna's ``JournalFileBackend``: ``flock`` on a file beside it, which the system
    releases when its holder dies. Optuna's own locks (a symlink or a file that exists while held) outlive a
    worker SIGKILLed while it writes: the others then wait for a grace period, or for ever when the journal's
    path was relative (the symlink it checks points nowhere)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        return True

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor of its open file releases the lock


def _write_ahead(engine: Any) -> None:
    """SQLite in write-ahead mode, synced at checkpoints: Optuna commits a dozen times per trial, and a sync
    per commit cost 12 ms each here (0.15 s a trial). Each connection opened from now on gets it."""
    from sqlalchemy import event

    def pragmas(connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    event.listen(engine, "connect", pragmas)
    engine.dispose()  # the connections Optuna opened to create the tables


def _driver_message(exc: Exception) -> str:
    from ultra_base.redact import redact_text

    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    message = redact_text(text[0] if text else type(exc).__name__)
    if isinstance(exc, ModuleNotFoundError) or "No module named" in message:
        message += " (pip install -e '.[sweep]' brings psycopg for PostgreSQL and pymysql for MySQL)"
    return message


def join_study(handle: StudyHandle, name: str, identity: dict[str, Any]) -> StudyHandle:
    """Create the study ``name`` for ``identity``, or join it when it holds the same sweep (refused otherwise)."""
    optuna = _optuna()
    direction = "minimize" if identity["minimize"] else "maximize"
    try:
        study = optuna.create_study(storage=handle.storage, study_name=name, direction=direction, load_if_exists=True)
        stored = study.user_attrs.get(IDENTITY)
        if stored is None:
            study.set_user_attr(IDENTITY, identity)
            stored = optuna.load_study(study_name=name, storage=handle.storage).user_attrs[IDENTITY]
    except UltraError:
        raise
    except Exception as exc:
        raise UltraError(f"--storage {handle.shown}: study '{name}': {_driver_message(exc)}") from None
    difference = first_difference(stored, identity)
    if difference:
        raise UltraError(
            f"study '{name}' in {handle.shown} runs another sweep: {difference}; "
            "run this worker with the study's sweep, or give another --study name"
        )
    handle.study = study
    return handle


def load_study(handle: StudyHandle, name: str) -> tuple[Any, dict[str, Any]]:
    """The existing study ``name`` and the sweep it holds (for ``--status`` and ``--report``)."""
    optuna = _optuna()
    try:
        names = optuna.get_all_study_names(storage=handle.storage)
        if name not in names:
            known = f"; it holds {', '.join(sorted(names))}" if names else "; it holds no study yet"
            raise UltraError(f"--study {name}: no such study in {handle.shown}{known}")
        study = optuna.load_study(study_name=name, storage=handle.storage)
    except UltraError:
        raise
    except Exception as exc:
        raise UltraError(f"--storage {handle.shown}: study '{name}': {_driver_message(exc)}") from None
    identity = study.user_attrs.get(IDENTITY)
    if not isinstance(identity, dict):
        raise UltraError(f"--study {name}: the study in {handle.shown} was not made by ultra sweep")
    handle.study = study
    return study, identity


def identity_of(spec: Any, pipeline_text: str) -> dict[str, Any]:
    """What a study stores of its sweep: the pipeline, the search space and the objective."""
    space = {
        s.key: s.values
        if isinstance(s.values, list)
        else {"low": s.values.low, "high": s.values.high, "log": s.values.log}
        for s in spec.spaces
    }
    return {
        "pipeline": spec.pipeline.name,
        "pipeline_text": pipeline_text,
        "keys": spec.keys,
        "space": space,
        "method": spec.method,
        "trials": spec.total,
        "seed": spec.seed,
        "metric": spec.metric,
        "minimize": bool(spec.minimize),
        **({"grid_order": GRID_ORDER} if spec.method == "grid" else {}),
    }


def first_difference(stored: dict[str, Any], mine: dict[str, Any]) -> str | None:
    """The first way this worker's sweep differs from the study's, in words; None when they agree."""
    if stored.get("pipeline_text") != mine["pipeline_text"]:
        return "its pipeline differs " + _line_difference(stored.get("pipeline_text") or "", mine["pipeline_text"])
    keys = stored.get("keys") or []
    if set(keys) != set(mine["keys"]):
        return f"the study searches {keys}, this worker {mine['keys']}"
    for key in mine["keys"]:
        if stored["space"].get(key) != mine["space"][key]:
            return f"{key}: the study has {stored['space'].get(key)}, this worker {mine['space'][key]}"
    if keys != mine["keys"]:  # the same keys and values: the grid's points would be numbered in another order
        return f"the same keys in another order: the study searches {keys}, this worker {mine['keys']}"
    for name in ("method", "trials", "metric", "minimize"):
        if stored.get(name) != mine[name]:
            return f"{name}: the study has {stored.get(name)!r}, this worker {mine[name]!r}"
    if stored.get("grid_order") != mine.get("grid_order"):
        return (
            "the study numbers its grid points in Optuna's shuffled order (an older ultra sweep made it), "
            "this worker in the sweep's order, so a trial number would name another point; finish the study "
            "with the version that made it"
        )
    return None


def _line_difference(theirs: str, mine: str) -> str:
    a, b = theirs.splitlines(), mine.splitlines()
    for number, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x != y:
            return f"at line {number}: the study has {x.strip()!r}, this worker {y.strip()!r}"
    return f"in length: the study's has {len(a)} lines, this worker's {len(b)}"
