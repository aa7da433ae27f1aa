"""The ``ultra`` client: parses pipelines, checks their dataflow, and runs them over MCP stdio servers."""
