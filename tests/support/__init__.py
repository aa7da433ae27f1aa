"""Test helpers shared by several test packages (the local OpenAI-compatible stub server)."""
