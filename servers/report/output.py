"""Where a report or comparison is written, and the checks of the settings both share."""

from __future__ import annotations

import os
from pathlib import Path

from ultra_base.errors import InputError
from ultra_kit.files import atomic_write, result_path


def check_settings(*, bootstrap_resamples: int, confidence: float, max_table_rows: int) -> None:
    if not 0 < confidence < 1:
        raise InputError(f"confidence must lie between 0 and 1 (e.g. 0.95); got {confidence}")
    if bootstrap_resamples < 1:
        raise InputError(f"bootstrap_resamples must be at least 1 (e.g. 1000); got {bootstrap_resamples}")
    if max_table_rows < 1:
        raise InputError(f"max_table_rows must be at least 1 (e.g. 2000); got {max_table_rows}")


def output_folder(out_dir: str | os.PathLike[str] | None, save_path: str, prefix: str = "report") -> Path:
    """``out_dir`` as given (created), or a new ``<prefix>_<timestamp>`` folder under ``save_path``."""
    if out_dir is not None:
        folder = Path(out_dir).expanduser()
        if folder.exists() and not folder.is_dir():
            raise InputError("--out names a file; give a folder (it is created if needed)", path=str(folder))
        folder.mkdir(parents=True, exist_ok=True)
        return folder.resolve()
    return result_path(save_path, prefix, "")


def write_bytes(path: Path, data: bytes) -> Path:
    """Write binary ``data`` atomically (through the text writer's temporary-file-and-rename)."""
    return atomic_write(path, lambda handle: handle.buffer.write(data))
