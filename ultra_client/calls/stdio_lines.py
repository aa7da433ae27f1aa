"""The one place that reaches into the MCP SDK's stdio client: hand its reader whole lines.

The SDK's ``stdio_client`` joins each chunk read from the server's stdout to the unfinished line
before it (``(buffer + chunk).split("\\n")``). A message is one line, and a pipe read returns at
most 64 KiB, so a result of n bytes costs O(n^2 / 64 KiB): 37 s for a 36 MB ``get_data`` result,
against 1.2 s in-process (``bench/stdio_bench.py``). Swapping the SDK's ``TextReceiveStream``
for one that returns text only up to a newline keeps that buffer empty and the read linear;
what the SDK does with the lines is unchanged. If a future SDK no longer has the name, nothing
is swapped (the slow path still works) and ``tests/client/test_stdio_lines.py`` fails so that
someone looks.
"""

from __future__ import annotations

from anyio import EndOfStream
from anyio.streams.text import TextReceiveStream

PATCHED_NAME = "TextReceiveStream"


class WholeLineTextStream(TextReceiveStream):
    """Decoded text, returned only up to the last newline received (the rest waits for more)."""

    def __post_init__(self, encoding: str, errors: str) -> None:
        super().__post_init__(encoding, errors)
        self._pending: list[str] = []

    async def receive(self) -> str:
        while True:
            try:
                chunk = await super().receive()
            except EndOfStream:
                if self._pending:
                    rest, self._pending = "".join(self._pending), []
                    return rest
                raise
            cut = chunk.rfind("\n")
            if cut < 0:
                self._pending.append(chunk)
                continue
            self._pending.append(chunk[: cut + 1])
            text = "".join(self._pending)
            self._pending = [chunk[cut + 1 :]] if cut + 1 < len(chunk) else []
            return text


def install() -> bool:
    """Use whole lines in ``mcp.client.stdio``; False (and nothing changed) when the SDK lacks the name."""
    import mcp.client.stdio as sdk_stdio

    current = getattr(sdk_stdio, PATCHED_NAME, None)
    if current is None or not (isinstance(current, type) and issubclass(current, TextReceiveStream)):
        return False
    setattr(sdk_stdio, PATCHED_NAME, WholeLineTextStream)
    return True
