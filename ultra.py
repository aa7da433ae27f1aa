"""``ultra``: build and run evaluation pipelines of MCP servers, or call one tool.

The engine lives in ``ultra_client``; this module is the console script's entry point.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the ``ultra`` command line; returns the exit code."""
    from ultra_client.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
