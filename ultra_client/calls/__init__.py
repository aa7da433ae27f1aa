"""Reaching servers: in-process through their SPEC or as MCP stdio subprocesses, and ``ultra call``."""
