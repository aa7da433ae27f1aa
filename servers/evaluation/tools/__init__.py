"""The evaluation server's MCP tools, one module per tool family; ``trec`` first, so ``ultra call
evaluation.evaluate_trec`` imports no answer metric and no LLM client."""

from ultra_kit.factory import tool_modules

load_tools = tool_modules(__name__, "trec", "answers", "mtrag", "similarity", "consistency", "judged")
