"""The custom server's MCP tools, one module per tool family."""

from ultra_kit.factory import tool_modules

load_tools = tool_modules(__name__, "boxed", "qrels", "runs")
