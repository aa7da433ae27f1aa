"""What the tests' throwaway servers share: a free port of 127.0.0.1, and a command run as the system account
that owns a database's files (PostgreSQL and MariaDB refuse to run as root)."""

from __future__ import annotations

import os
import socket


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def as_owner(owner: str, command: list[str]) -> list[str]:
    """``command`` as it is, or run as ``owner`` through ``runuser`` when the tests run as root."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", owner, "--", *command]
