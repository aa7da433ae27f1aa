"""Where tools may write: results go under the output root (``output/`` of the working directory, or of
``$ULTRA_HOME``) unless ``ULTRA_ALLOW_OUTSIDE_OUTPUT=1`` is set. What tools may read:
``ultra_base.errors.readable_path`` and ``ultra_kit.paths.read_arguments``."""

from __future__ import annotations

import os
from pathlib import Path

from ultra_base.environment import OUTPUT_ROOT
from ultra_base.errors import InputError

ALLOW_OUTSIDE_ENV = "ULTRA_ALLOW_OUTSIDE_OUTPUT"  # results may go outside OUTPUT_ROOT when this is 1


def outside_allowed() -> bool:
    """True when the user opted out of confining results to the output root."""
    return os.environ.get(ALLOW_OUTSIDE_ENV, "").strip() == "1"


def check_save_path(save_path: str | os.PathLike[str], tool_name: str, suffix: str) -> Path:
    """``save_path`` checked: inside the output root (unless opted out), and a file name only with ``suffix``."""
    if not str(save_path).strip():
        raise InputError(f"save_path is empty; give a folder under {OUTPUT_ROOT}/ (e.g. {OUTPUT_ROOT}/{tool_name})")
    target = Path(save_path).expanduser()
    names_file = bool(target.suffix) and not target.is_dir()
    if names_file and target.suffix.lower() != suffix.lower():
        raise InputError(
            f"save_path names a file ending {target.suffix!r}, but {tool_name} writes {suffix} files; "
            f"give a folder or a file name ending {suffix}",
            path=str(save_path),
        )
    check_inside_output(save_path, setting="save_path")
    return target


def check_inside_output(path: str | os.PathLike[str], *, setting: str) -> Path:
    """``path`` (a setting a tool writes to) checked: under the output root once ``..`` and symlinks are
    resolved, unless ``ULTRA_ALLOW_OUTSIDE_OUTPUT=1``; else an InputError naming ``setting``."""
    target = Path(path).expanduser()
    if not outside_allowed():
        root = Path(OUTPUT_ROOT).resolve()
        if not target.resolve().is_relative_to(root):
            raise InputError(
                f"{setting} is outside the output folder {root}; give a path under {OUTPUT_ROOT}/, "
                f"or set {ALLOW_OUTSIDE_ENV}=1 to write elsewhere",
                path=str(path),
            )
    return target
