"""Batch mode: a tool's LLM work run in passes over the cache, request files, the OpenAI Batch API, the ledger."""
