"""The generation server: answers prompts with the shared LLM client (OpenAI-compatible or local model)."""
