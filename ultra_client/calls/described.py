"""The servers a pipeline names as their ``SPEC``s describe them, none started: what the start-up checks read.

With ``--stdio`` (or ``transport: stdio`` on a server's entry) each server runs as an MCP subprocess, and
starting them takes seconds (about 5 s for the six of ``examples/rag_full.yaml``). The checks made before
the first step (the dataflow, the parameter file's setting values, a gate's variables, a sweep's keys and
metric) need only what a server's ``SPEC`` says: its tools, wrapped as the in-process path wraps them
(``LocalServer.learn``), its ``parameter.yaml`` and its ``setting_checks``. So ``ultra run``, ``build``,
``sweep`` and ``run --estimate`` check on this description first, and a mistake is refused before any
process starts, with the message the in-process path gives.

A server whose ``SPEC`` cannot be loaded here (a custom server that only speaks stdio, or one whose tools
fail to import: its log will say why) leaves nothing to describe the pipeline with: the checks then wait
for the started servers, as they always did.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ultra_client.calls.local_server import LocalServer
from ultra_client.calls.server_info import ServerLocation


@dataclass
class DescribedServers:
    """The servers as a pool shows them to the checks (``servers``: alias -> a LocalServer never started)."""

    servers: dict[str, LocalServer]


def described_servers(locations: list[ServerLocation]) -> DescribedServers | None:
    """Every server of ``locations`` described by its ``SPEC``, when one of them is to run over stdio; None when
    none is (the in-process pool is as quick to load) or some server has no ``SPEC`` that loads here."""
    from ultra_client.calls.server_pool import server_parameters
    from ultra_kit.inprocess import load_spec

    if not any(location.stdio for location in locations):
        return None
    servers: dict[str, LocalServer] = {}
    for location in locations:
        spec = load_spec(location.module, location.root)
        if spec is None:
            return None
        described = LocalServer(location, Path(os.devnull), server_parameters(location), spec)
        try:
            servers[location.alias] = described.learn()
        except Exception:  # noqa: BLE001 - its subprocess reports it, with its log, when it starts
            return None
    return DescribedServers(servers)
