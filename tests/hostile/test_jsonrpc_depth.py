"""A JSON-RPC request nested deeper than the MCP SDK's parser reads is answered with its id (-32602, naming the
limit), at any depth (1,004 levels, past the json module's recursion; 100,000), on a raw stdio connection to a
real server, so that its client does not wait for its time-out (#40 M13)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


class RawConnection:
    """``python -m servers.benchmark`` over stdio, written to and read from line by line."""

    def __init__(self, cwd: Path) -> None:
        env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "servers.benchmark"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.replies: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: [self.replies.put(line) for line in self.process.stdout], daemon=True).start()

    def send(self, raw: str | bytes) -> None:
        self.process.stdin.write((raw.encode() if isinstance(raw, str) else raw) + b"\n")
        self.process.stdin.flush()

    def reply(self, timeout: float) -> dict:
        return json.loads(self.replies.get(timeout=timeout))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawConnection]:
    connection = RawConnection(tmp_path)
    try:
        connection.send(json.dumps(INITIALIZE))
        assert connection.reply(timeout=60)["id"] == 0
        connection.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield connection
    finally:
        connection.process.kill()
        connection.process.communicate(timeout=30)


def nested(levels: int) -> str:
    """A JSON object nested ``levels`` deep around the string "x"."""
    return '{"a":' * levels + '"x"' + "}" * levels


def deep_call(request_id: int | str, levels: int) -> str:
    """A valid tools/call of get_data whose ``benchmark`` argument holds a value ``levels`` deep (the request
    itself adds 4 levels: the message, params, arguments, benchmark)."""
    head = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call"})[:-1]
    return head + ', "params": {"name": "get_data", "arguments": {"benchmark": {"key_map": ' + nested(levels) + "}}}}"


@pytest.mark.parametrize("request_id", [7, "deep-request"])
def test_a_request_200_deep_gets_invalid_params_with_its_id(server: RawConnection, request_id: int | str) -> None:
    line = deep_call(request_id, 200)
    assert json.loads(line)["id"] == request_id  # valid JSON, a valid request
    started = time.monotonic()
    server.send(line)
    answer = server.reply(timeout=10)
    assert time.monotonic() - started < 5
    assert answer["id"] == request_id and answer["error"]["code"] == -32602, answer
    assert "nested 204 levels deep; this server reads at most 200 levels" in answer["error"]["message"]
    assert answer["error"]["data"] == {"depth": 204, "max_depth": 200}
    server.send('{"jsonrpc":"2.0","id":8,"method":"tools/list"}')  # and the server goes on serving
    assert [tool["name"] for tool in server.reply(timeout=30)["result"]["tools"]] == ["get_data"]


def test_a_request_within_the_limit_gets_the_tool_s_answer(server: RawConnection) -> None:
    server.send(deep_call(9, 190))
    answer = server.reply(timeout=30)
    assert answer["id"] == 9 and answer["result"]["isError"] is True  # read, and refused by the tool's schema
    assert "key_map" in answer["result"]["content"][0]["text"]


@pytest.mark.parametrize("levels", [1_000, 100_000])
def test_a_request_deeper_than_the_json_module_reads_gets_its_id(server: RawConnection, levels: int) -> None:
    line = deep_call(11, levels)  # 1,004 levels with the request's own 4: M13's repro
    server.send(line)
    answer = server.reply(timeout=30)
    depth = levels + 4
    assert answer["id"] == 11 and answer["error"]["code"] == -32602, answer
    assert f"nested {depth} levels deep; this server reads at most 200 levels" in answer["error"]["message"]
    assert answer["error"]["data"] == {"depth": depth, "max_depth": 200}
    server.send('{"jsonrpc":"2.0","id":12,"method":"tools/list"}')
    assert server.reply(timeout=30)["id"] == 12


def test_a_line_that_is_not_json_still_gets_a_parse_error(server: RawConnection) -> None:
    cut_short = deep_call(10, 100_000)[:-1]  # one closing bracket missing: no request to answer
    for line in (cut_short, '{"jsonrpc":"2.0","id":11,"method":"tools/list"'):
        server.send(line)
        answer = server.reply(timeout=30)
        assert answer["id"] is None and answer["error"] == {"code": -32700, "message": "Parse error"}, answer
    server.send('{"jsonrpc":"2.0","id":12,"method":"tools/list"}')
    assert server.reply(timeout=30)["id"] == 12
