"""The target server: asks the system under test (your RAG service, function, chain or MCP tool) every question."""
