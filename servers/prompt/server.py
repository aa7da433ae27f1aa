"""The prompt MCP server: ``qa_boxed`` and ``qa_rag_boxed`` render one prompt per question."""

from pathlib import Path

from servers.prompt.tools import load_tools
from ultra_kit.factory import ServerSpec

SPEC = ServerSpec(
    "prompt",
    Path(__file__).parent,
    load_tools,
    instructions="Renders prompts from sandboxed Jinja2 templates: questions, optionally with retrieved passages.",
)
