"""MCP tool servers of the ultra-eval toolkit; each subpackage is one server."""
