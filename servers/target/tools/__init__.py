"""The target server's MCP tools."""

from ultra_kit.factory import tool_modules

load_tools = tool_modules(__name__, "ask")
