"""A throwaway MariaDB (MySQL) server from Debian's ``mariadb-server`` package, for the tests of shared sweeps.

``server(password)`` runs ``mariadb-install-db`` into a fresh temporary folder (as the ``mysql`` user when the tests
run as root, as PostgreSQL's fixture runs as ``postgres``), starts ``mariadbd`` on a free port of 127.0.0.1 with
its socket in that folder, creates the user ``ultra`` (password login over TCP) and the database ``ultra``, and
stops and removes it all afterwards. ``binaries()`` is None when the package is absent, and ``INSTALL`` says how
to install it (``scripts/test`` does). The set-up talks to the server with PyMySQL, which the tests need anyway.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.ports import as_owner, free_port

INSTALL = "MariaDB is not installed: apt-get install mariadb-server (scripts/test installs it)"
USER = DATABASE = "ultra"
OWNER = "mysql"  # the unprivileged account Debian's package creates
BIN_ENV = "ULTRA_MARIADB_BIN"  # a folder holding mariadbd and mariadb-install-db, used instead of the search below
START_SECONDS = 120  # generous, on a loaded machine: the fixture polls, it asserts no timing


@dataclass
class Binaries:
    server: Path
    install_db: Path


def binaries() -> Binaries | None:
    """``mariadbd`` and ``mariadb-install-db`` (or their MySQL-named links), or None."""
    if os.environ.get(BIN_ENV):
        given = Path(os.environ[BIN_ENV])
        found = Binaries(given / "mariadbd", given / "mariadb-install-db")
        return found if found.server.is_file() and found.install_db.is_file() else None
    server = shutil.which("mariadbd") or shutil.which("mariadbd", path="/usr/sbin") or shutil.which("mysqld")
    install_db = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
    return Binaries(Path(server), Path(install_db)) if server and install_db else None


@dataclass
class Server:
    port: int
    folder: Path

    def url(self, password_reference: str) -> str:
        """A SQLAlchemy URL for PyMySQL with the password as ``${VAR}``."""
        return f"mysql+pymysql://{USER}:{password_reference}@127.0.0.1:{self.port}/{DATABASE}"


def _wait_for_socket(socket_path: Path, process: subprocess.Popen, log: Path) -> object:
    """A PyMySQL connection as the server's root over its socket, once it answers."""
    import pymysql

    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            return pymysql.connect(unix_socket=str(socket_path), user="root", password="", autocommit=True)
        except pymysql.err.OperationalError:
            if process.poll() is not None or time.monotonic() > deadline:
                text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise AssertionError(f"MariaDB did not start (exit {process.poll()}):\n{text}") from None
            time.sleep(0.1)


@contextlib.contextmanager
def server(password: str) -> Iterator[Server]:
    """A running MariaDB whose user ``ultra`` logs in over TCP with ``password`` and owns the database ``ultra``."""
    found = binaries()
    assert found is not None, INSTALL
    folder = Path(tempfile.mkdtemp(prefix="ultra-mysql-"))
    if os.geteuid() == 0:
        shutil.chown(folder, OWNER, OWNER)
    data, log, socket_path = folder / "data", folder / "server.log", folder / "mysqld.sock"
    init = [str(found.install_db), "--no-defaults", f"--datadir={data}", "--auth-root-authentication-method=normal",
            "--skip-test-db"]  # fmt: skip
    subprocess.run(as_owner(OWNER, init), check=True, capture_output=True)
    port = free_port()
    # flushes off, as the PostgreSQL fixture's fsync=off: a throwaway server
    options = [
        "--no-defaults",
        f"--datadir={data}",
        f"--socket={socket_path}",
        f"--port={port}",
        "--bind-address=127.0.0.1",
        f"--pid-file={folder / 'mysqld.pid'}",
        f"--log-error={log}",
        "--skip-name-resolve",
        "--skip-log-bin",
        "--innodb-flush-log-at-trx-commit=0",
        "--innodb-buffer-pool-size=32M",
        "--innodb-doublewrite=0",
    ]
    process = subprocess.Popen(as_owner(OWNER, [str(found.server), *options]), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        connection = _wait_for_socket(socket_path, process, log)
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {DATABASE}")
            cursor.execute(f"CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY %s", (password,))
            cursor.execute(f"GRANT ALL ON {DATABASE}.* TO '{USER}'@'127.0.0.1'")
        connection.close()
        yield Server(port, folder)
    finally:
        pid_file = folder / "mysqld.pid"
        with contextlib.suppress(OSError, ValueError):  # the server's own pid (runuser's child), else runuser's
            os.kill(int(pid_file.read_text().strip()) if pid_file.exists() else process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=START_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)
