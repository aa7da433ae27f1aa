"""Byte-compile the project before a bench times ``ultra`` processes.

An editable install is not compiled, and where PYTHONDONTWRITEBYTECODE is set (as on these machines) every
``ultra`` process compiles the modules it imports again: about 0.15-0.2 s of each process's start-up that an
installed package (``pip install .`` compiles it) does not pay. The benches time the installed case.

    from bench.bytecode import byte_compile_project
"""

from __future__ import annotations

import compileall
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def project_packages() -> list[str]:
    """The project's top-level packages, as ``pyproject.toml`` lists them for setuptools (``servers*`` -> servers)."""
    import tomllib  # Python 3.11+

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["packages"]["find"]["include"]
    return [pattern.rstrip("*") for pattern in patterns]


def byte_compile_project() -> None:
    """Write the ``.pyc`` files of the project's packages and of ``ultra.py`` (stale ones are rewritten)."""
    for package in project_packages():
        compileall.compile_dir(ROOT / package, quiet=1)
    compileall.compile_file(ROOT / "ultra.py", quiet=1)
