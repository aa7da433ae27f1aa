"""A throwaway PostgreSQL server from Debian's ``postgresql`` package, for the tests of shared sweeps.

``server(password)`` runs ``initdb`` into a fresh temporary folder (as the ``postgres`` user when the tests run
as root: PostgreSQL refuses to run as root), starts it with ``pg_ctl`` on a free port of 127.0.0.1 and a socket
in that folder, and stops and removes it afterwards. ``binaries()`` is None when the package is absent, and
``INSTALL`` says how to install it (``scripts/test`` does).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.ports import as_owner, free_port

INSTALL = "PostgreSQL is not installed: apt-get install postgresql (scripts/test installs it)"
USER = "ultra"
OWNER = "postgres"  # the unprivileged account Debian's package creates
BIN_ENV = "ULTRA_POSTGRES_BIN"  # a folder holding initdb and pg_ctl, used instead of the search below


def binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (Debian keeps them out of PATH), or None."""
    if os.environ.get(BIN_ENV):
        given = Path(os.environ[BIN_ENV])
        return given if (given / "initdb").is_file() and (given / "pg_ctl").is_file() else None
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


@dataclass
class Server:
    port: int
    folder: Path

    def url(self, password_reference: str) -> str:
        """A SQLAlchemy URL for psycopg 3 with the password as ``${VAR}``."""
        return f"postgresql+psycopg://{USER}:{password_reference}@127.0.0.1:{self.port}/postgres"


@contextlib.contextmanager
def server(password: str) -> Iterator[Server]:
    """A running PostgreSQL whose superuser ``ultra`` logs in over TCP with ``password``."""
    bin_dir = binaries()
    assert bin_dir is not None, INSTALL
    folder = Path(tempfile.mkdtemp(prefix="ultra-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, OWNER, OWNER)
    data, log = folder / "data", folder / "server.log"
    pwfile = folder / "pw"
    pwfile.write_text(password + "\n", encoding="utf-8")
    if os.geteuid() == 0:
        shutil.chown(pwfile, OWNER, OWNER)
    init = [str(bin_dir / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={pwfile}", "--auth-host=scram-sha-256"]
    subprocess.run(as_owner(OWNER, [*init, "--auth-local=trust", "-E", "UTF8"]), check=True, capture_output=True)
    pwfile.unlink()
    port = free_port()
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    pg_ctl = str(bin_dir / "pg_ctl")
    subprocess.run(
        as_owner(OWNER, [pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "start"]),
        check=True,
        capture_output=True,
    )
    try:
        yield Server(port, folder)
    finally:
        subprocess.run(as_owner(OWNER, [pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"]), capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
