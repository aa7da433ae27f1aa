"""A server over stdio: unreadable lines get a JSON-RPC error reply, a crash reaches the agent with its cause."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest

from tests.conftest import ROOT

TOY_SOURCE = ROOT / "tests" / "client" / "toy_server"


@pytest.fixture
def toy_root(tmp_path: Path) -> Path:
    shutil.copytree(TOY_SOURCE, tmp_path / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def toy_env(root: Path) -> dict[str, str]:
    return {"PYTHONPATH": f"{root}{os.pathsep}{ROOT}", "PATH": os.environ.get("PATH", "")}


def test_unreadable_lines_get_a_parse_error_and_the_server_keeps_answering(toy_root: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "toy.server"],
        cwd=toy_root,
        env=toy_env(toy_root),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    replies: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [replies.put(line) for line in server.stdout], daemon=True).start()

    def send(raw: bytes) -> None:
        server.stdin.write(raw + b"\n")
        server.stdin.flush()

    def reply() -> dict:
        return json.loads(replies.get(timeout=60))

    try:
        send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
            ).encode()
        )
        assert reply()["id"] == 1
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        frames = [b"not json at all", b"\xff\xfe\x00\x81 binary", ("[" * 300 + "]" * 300).encode()]
        for frame in frames:
            send(frame)
            answer = reply()
            assert answer["id"] is None and answer["error"]["code"] == -32700, (frame[:40], answer)
        deep = '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"x":' + '{"a":' * 250 + "1" + "}" * 250 + "}}"
        send(deep.encode())  # a request: answered with its id (tests/hostile/test_jsonrpc_depth.py)
        answer = reply()
        assert answer["id"] == 5 and answer["error"]["code"] == -32602, answer
        send(b'{"jsonrpc":"2.0","id":7}')  # JSON, but no message
        answer = reply()
        assert answer["id"] is None and answer["error"] == {"code": -32600, "message": "Invalid Request"}
        send(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
        listing = reply()
        assert listing["id"] == 2 and "busy" in [tool["name"] for tool in listing["result"]["tools"]]
        assert server.poll() is None
    finally:
        server.kill()
        _, stderr = server.communicate(timeout=30)
    assert stderr.decode(errors="replace").count("stdin: a line") == 5  # one warning per line


def test_a_crash_reaches_an_mcp_client_with_its_type_message_and_log(toy_root: Path, tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    log_path = tmp_path / "toy.stderr.log"

    async def call() -> tuple[bool, str, bool, str]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "toy.server"], cwd=str(toy_root), env=toy_env(toy_root)
        )
        with open(log_path, "w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                crashed = await client.call_tool("explode", {"items": ["apples"], "mark": "?!"})
                after = await client.call_tool("upper", {"items": ["still", "alive"]})
        text = " ".join(block.text for block in crashed.content)
        return crashed.is_error, text, after.is_error, json.dumps(after.structured_content)

    is_error, text, after_error, after = anyio.run(call)
    assert is_error
    assert text == (
        "Error executing tool explode: unexpected error: ValueError: cannot count apples with ?! "
        "(traceback in the server's stderr)"
    )
    assert not after_error and after == '{"items": ["STILL", "ALIVE"]}'
    log = log_path.read_text()
    assert "explode crashed" in log and "Traceback (most recent call last)" in log
