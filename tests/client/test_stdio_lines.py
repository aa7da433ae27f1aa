"""The whole-line shim for the MCP SDK's stdio reader (``ultra_client/calls/stdio_lines.py``)."""

from __future__ import annotations

import json

import anyio
import pytest
from anyio.streams.text import TextReceiveStream

from tests.conftest import ROOT, run_ultra
from ultra_client.calls import stdio_lines


def test_the_sdk_still_reads_stdout_through_the_name_we_swap() -> None:
    import mcp.client.stdio as sdk_stdio

    current = getattr(sdk_stdio, stdio_lines.PATCHED_NAME, None)
    assert isinstance(current, type) and issubclass(current, TextReceiveStream), (
        "mcp.client.stdio no longer reads through anyio's TextReceiveStream: check whether its reader is "
        "still quadratic in the message size, and update or drop ultra_client/calls/stdio_lines.py"
    )
    assert stdio_lines.install() is True
    assert sdk_stdio.TextReceiveStream is stdio_lines.WholeLineTextStream


@pytest.mark.anyio
async def test_whole_lines_come_out_whatever_the_chunks() -> None:
    message = '{"a": "é€😀 ' + "x" * 70_000 + '"}\n{"b": 1}\n{"c": 2}'
    data = message.encode("utf-8")
    send, receive = anyio.create_memory_object_stream[bytes](100)
    for start in range(0, len(data), 7_001):  # chunk borders fall inside multi-byte characters too
        await send.send(data[start : start + 7_001])
    await send.aclose()
    stream = stdio_lines.WholeLineTextStream(receive)
    pieces = [piece async for piece in stream]
    assert "".join(pieces) == message
    assert all(piece.endswith("\n") for piece in pieces[:-1]) and pieces[-1] == '{"c": 2}'
    assert len(pieces) == 2  # the long line whole (with the next one that ended in the same chunk), then the rest


def test_a_large_result_over_stdio_equals_the_in_process_one(tmp_path) -> None:
    rows = [{"id": str(i), "question": f"question {i} " + "word " * 60, "golden_answers": ["a"]} for i in range(12_000)]
    data = tmp_path / "big.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = f"benchmark={{path: {data}, key_map: {{q_ls: question, id_ls: id}}}}"
    over_stdio = run_ultra("call", "--stdio", "benchmark.get_data", spec, cwd=ROOT)
    in_process = run_ultra("call", "benchmark.get_data", spec, cwd=ROOT)
    assert over_stdio.returncode == 0, over_stdio.stderr[-2000:]
    assert len(over_stdio.stdout) > 3_000_000
    assert over_stdio.stdout == in_process.stdout
    assert json.loads(over_stdio.stdout)["id_ls"][-1] == "11999"
