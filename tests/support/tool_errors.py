"""What an MCP tool error must hold: the reason, after the SDK's prefix."""

from __future__ import annotations


def has_reason(text: str, tool: str) -> bool:
    """An MCP error text that says why: ``Error executing tool <tool>: <a reason of a few words>``."""
    prefix = f"Error executing tool {tool}: "
    return text.startswith(prefix) and len(text[len(prefix) :].split()) >= 3
