"""A custom server package written into a test's folder: what a pipeline names by its path."""

from __future__ import annotations

from pathlib import Path


def write_server_package(folder: Path, *, server: str, main: str, parameters: str) -> Path:
    """``folder`` as a server package: ``server.py`` (its ``SPEC``), ``__main__.py`` (what ``--stdio`` starts) and
    ``parameter.yaml``; the folder."""
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "server.py").write_text(server)
    (folder / "__main__.py").write_text(main)
    (folder / "parameter.yaml").write_text(parameters)
    return folder
