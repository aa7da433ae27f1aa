"""The error a user can act on, raised by pure code without any MCP import."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input from a user: the message names the file, the line and what was expected.

    Pure functions raise it; the server factory turns it into an MCP ``ToolError`` and the
    ``ultra`` client prints it without a traceback.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line
