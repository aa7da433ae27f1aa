"""Where rubrics come from: the ``rubrics`` setting, or ``rubrics_path``, a YAML file of them read with lines.

The file is a list of declarations (or a mapping with the key ``rubrics`` holding one), read inside the
read roots by the kit's line-aware loader (``ultra_kit.yaml_files.lines``: size, depth and alias limits,
duplicate keys refused); its mappings, lists and strings remember their lines, so a mistake is reported
at file:line.
"""

from __future__ import annotations

from typing import Any

from servers.judge.rubrics.declaration import Rubric, read_rubrics
from ultra_base.errors import InputError, existing_file
from ultra_kit.yaml_files.lines import load_yaml_with_lines


def rubrics_file(path: str) -> list[Rubric]:
    """The rubrics declared in the YAML file at ``path`` (inside the read roots), checked at file:line."""
    file = existing_file(path, what="rubrics file")
    data = load_yaml_with_lines(file, "rubrics")
    if isinstance(data, dict) and set(data) == {"rubrics"}:
        data = data["rubrics"]
    if not isinstance(data, list):
        raise InputError("a rubrics file is a list of declarations (or {rubrics: [...]})", path=str(path), line=1)
    return read_rubrics(data, path=str(path))


def declared_rubrics(rubrics: Any, rubrics_path: str, *, parameter_file: str | None = None) -> list[Rubric]:
    """The rubrics of a call: ``rubrics`` (from ``parameter_file`` when known) or the file ``rubrics_path``."""
    given = rubrics not in (None, [], "")
    if given and rubrics_path:
        raise InputError("give rubrics or rubrics_path, not both")
    if rubrics_path:
        return rubrics_file(rubrics_path)
    if not given:
        raise InputError("no rubric: set rubrics (a list of declarations) or rubrics_path (a YAML file of them)")
    return read_rubrics(rubrics, path=parameter_file)


def check_rubrics(value: Any, *, parameter_file: str) -> None:
    """``ultra build``'s check of the ``rubrics`` setting (``ServerSpec.setting_checks``): [] is left for the call."""
    if value not in (None, []):
        read_rubrics(value, path=parameter_file)


def check_rubrics_path(value: Any, *, parameter_file: str) -> None:
    """``ultra build``'s check of ``rubrics_path``: the file's declarations, at their file:line."""
    if not isinstance(value, str):
        raise InputError("rubrics_path must be the path of a YAML file ('' = none)", path=parameter_file,
                         line=getattr(value, "line", None))  # fmt: skip
    if value:
        rubrics_file(value)
