"""Size and depth limits for every whole JSON document the project reads: run folders' records
(``memory.json``, ``timings.json``, ``usage.json``, a run's parameter file written as JSON), NeMo jobs, result files,
JSON Lines records (``load_jsonl_file``: each line within the depth limit, the file within the size).

The same rules as YAML files (``ultra_base.file_limits``): a regular file (a directory, FIFO or
``/dev/zero`` is refused unread), at most a size (files people write: ``MAX_BYTES``, those of YAML files;
records a run writes: ``MAX_RECORD_BYTES``), nested at most ``MAX_JSON_DEPTH`` levels (checked before
parsing, so a document 100,000 levels deep never reaches the recursive parser). Every refusal is an
InputError naming the file and the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultra_base.file_limits import KEEP_SMALL, MAX_BYTES, MAX_JSON_DEPTH, loads_limited, read_limited_text

MAX_RECORD_BYTES = 200 * 1024 * 1024  # a run's memory.json or result file (the largest measured: a few MB)
RECORD_ADVICE = (
    "No file ultra writes is that large: check that it is the file meant (a run folder or result from elsewhere "
    "may be damaged), or keep a smaller one"
)

__all__ = ["MAX_BYTES", "MAX_JSON_DEPTH", "MAX_RECORD_BYTES", "load_json_file", "load_jsonl_file", "loads_limited"]


def load_json_file(path: str | Path, *, kind: str = "", max_bytes: int = MAX_BYTES) -> Any:
    """The JSON document in ``path``, a regular file of at most ``max_bytes``, nested at most MAX_JSON_DEPTH
    levels; InputError naming the file and the reason otherwise (missing, a directory, too large, too deep,
    malformed)."""
    file = Path(path)
    return loads_limited(_limited_text(file, kind, max_bytes), path=str(file))


def load_jsonl_file(path: str | Path, *, kind: str = "", max_bytes: int = MAX_RECORD_BYTES) -> list[Any]:
    """The records of the JSON Lines file ``path`` (blank lines skipped), the file at most ``max_bytes``, each line
    nested at most MAX_JSON_DEPTH levels; InputError naming the file, the line and the reason otherwise."""
    file = Path(path)
    lines = _limited_text(file, kind, max_bytes).splitlines()
    return [loads_limited(line, path=str(file), line=number) for number, line in enumerate(lines, 1) if line.strip()]


def _limited_text(file: Path, kind: str, max_bytes: int) -> str:
    advice = RECORD_ADVICE if max_bytes == MAX_RECORD_BYTES else KEEP_SMALL
    return read_limited_text(file, kind, max_bytes=max_bytes, form="JSON", advice=advice)
