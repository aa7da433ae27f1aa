"""``ultra``: build and run evaluation pipelines of MCP servers, or call one tool.

The engine lives in ``ultra_client``; this module is the console script's entry point.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the ``ultra`` command line; returns the exit code."""
    from ultra_client.cli import main as cli_main

    return cli_main(argv)


def console() -> None:
    """The console script: ``main``, then leave without tearing down every loaded module.

    Python's own teardown of numpy, pyarrow and the rest takes 0.05-0.1 s, a noticeable share of a
    short ``ultra call``. Exit handlers still run and the output is flushed first; an exception
    (a bug: user mistakes are handled in ``main``) leaves the normal way, with its traceback.
    """
    try:
        code = main()
    except SystemExit as stop:  # argparse's --help, --version and usage errors
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 2)
        if not isinstance(stop.code, int) and stop.code is not None:
            print(stop.code, file=sys.stderr)
    import atexit
    import contextlib
    import os

    atexit._run_exitfuncs()  # logging's shutdown, weakref finalizers (temporary folders), ...
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing more to say
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    console()
