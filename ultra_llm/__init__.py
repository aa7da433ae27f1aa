"""The LLM client shared by the judge, generation and retriever servers: settings, the client with
retries and bounded concurrency, the SQLite answer cache and the local in-process backends."""
