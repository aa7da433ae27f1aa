"""Readers for JSONL, JSON, CSV and Parquet that name the file and line of bad input."""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, existing_file
from ultra_base.file_limits import MAX_JSON_DEPTH, check_json_depth, json_with_bounded_integers
from ultra_base.line_limits import bounded_lines


def check_file_size(path: str | os.PathLike[str], *, max_bytes: int, setting: str, where: str = "") -> None:
    """Refuse, unread, a file larger than ``max_bytes``; the error names the size, the limit, the ``setting`` that
    raises it and ``where`` it is raised (default: the parameter file, or ``ultra call``)."""
    size = Path(path).expanduser().stat().st_size
    if size > max_bytes:
        where = where or f"in the parameter file, or {setting}=<bytes> on `ultra call`"
        raise InputError(
            f"the file is {size:,} bytes, more than {setting} = {max_bytes:,} bytes allows; it was not read. "
            f"Raise {setting} ({where}) to read it",
            path=str(path),
        )


@dataclass(frozen=True)
class SizeLimit:
    """The bytes a data file may have, and the setting that raises them (``where``: how; see check_file_size)."""

    max_bytes: int
    setting: str
    where: str = ""

    def check(self, path: str | os.PathLike[str]) -> None:
        """Refuse ``path``, unread, when it is larger."""
        check_file_size(path, max_bytes=self.max_bytes, setting=self.setting, where=self.where)


_FIELD_NAME = re.compile(r"[\w .-]{1,40}")  # what a field name looks like; anything else is elided


def shown_field_names(names: list[str]) -> list[str]:
    """``names`` (of a file's fields) as an error may show them: a name that does not look like one (a
    whole line of a file that is not a table, ``KEY=value``) becomes ``'…'``, so no value is quoted."""
    return [name if isinstance(name, str) and _FIELD_NAME.fullmatch(name) else "…" for name in names]


def _json_error(exc: json.JSONDecodeError) -> str:
    return f"invalid JSON at column {exc.colno}: {exc.msg}"


def _loads(text: str, *, path: str, line: int | None = None) -> Any:
    """``json.loads`` with the depth limit; a parser that still recurses too deep, or a whole number past every
    float (``ultra_base.file_limits.bounded_integer``: a score of 400 digits would overflow whatever reads it), is an
    InputError."""
    check_json_depth(text, path=path, first_line=line or 1)
    try:
        return json_with_bounded_integers(text, path=path, line=line)
    except RecursionError:
        raise InputError(f"JSON nested too deeply (limit {MAX_JSON_DEPTH} levels)", path=path, line=line) from None


def read_jsonl(path: str | os.PathLike[str], *, max_bytes: int | None = None) -> list[dict[str, Any]]:
    """Read a JSON Lines file of objects; blank lines are skipped.

    Raises InputError naming the line of the first malformed or non-object line; ``max_bytes``: a larger file is
    refused unread (a result file: ``ultra_kit.limits.json_files.MAX_RECORD_BYTES``).
    """
    _check_size(existing_file(path), max_bytes)
    return [row for _line, row in jsonl_rows(path)]


def jsonl_rows(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of a JSON Lines file and their line numbers, read one line at a time (a corpus may be many GB, of
    which a reader keeps a few rows); blank lines are skipped, a malformed or non-object line is an InputError."""
    with open_text(existing_file(path)) as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = _loads(line, path=str(path), line=line_number)
            except json.JSONDecodeError as exc:
                raise InputError(
                    _json_error(exc) + "; each line must be one JSON object", path=str(path), line=line_number
                ) from None
            if not isinstance(row, dict):
                raise InputError(
                    f"expected a JSON object, found {type(row).__name__}", path=str(path), line=line_number
                )
            yield line_number, row


def check_line_lengths(path: str | os.PathLike[str]) -> None:
    """Read the lines of a UTF-8 text file, keeping none, as ``read_jsonl`` reads them: a line over the line limit is
    the InputError it raises (the file, the line, the limit, what to do), and reading stops there."""
    with open_text(existing_file(path)) as handle:
        for _line in handle:
            pass


def read_json(path: str | os.PathLike[str], *, max_bytes: int | SizeLimit | None = None) -> Any:
    """Read a whole JSON document; a syntax error names its line and column; ``max_bytes``: a larger file is refused
    unread (a result file: ``ultra_kit.limits.json_files.MAX_RECORD_BYTES``; a data file: its SizeLimit)."""
    file = existing_file(path)
    _check_size(file, max_bytes)
    with open_text(file) as handle:
        text = handle.read()
    try:
        return _loads(text, path=str(path))
    except json.JSONDecodeError as exc:
        raise InputError(_json_error(exc), path=str(path), line=exc.lineno) from None


def _check_size(file: Path, max_bytes: int | SizeLimit | None) -> None:
    """Refuse, unread, a file larger than ``max_bytes`` (None: any size; a number: a result file's limit; a SizeLimit:
    a data file's, naming its setting), naming the size, the limit and what to do."""
    from ultra_kit.limits.json_files import RECORD_ADVICE

    if isinstance(max_bytes, SizeLimit):
        max_bytes.check(file)
        return
    size = file.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise InputError(
            f"the file is {size:,} bytes, more than the {max_bytes:,} bytes a result file may have; it was not read. "
            + RECORD_ADVICE,
            path=str(file),
        )


def read_csv(
    path: str | os.PathLike[str], *, delimiter: str | None = None, max_bytes: SizeLimit | None = None
) -> list[dict[str, Any]]:
    """Read a CSV (or TSV, by extension) file with a header row into a list of dicts.

    A row with more or fewer fields than the header raises InputError naming its line; ``max_bytes``: a larger
    file is refused unread.
    """
    file = existing_file(path)
    _check_size(file, max_bytes)
    if delimiter is None:
        delimiter = "\t" if file.suffix.lower() == ".tsv" else ","
    rows: list[dict[str, Any]] = []
    with open_text(file, newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            raise InputError("empty file; expected a header row", path=str(path)) from None
        except csv.Error as exc:
            raise InputError(f"malformed CSV: {exc}", path=str(path), line=reader.line_num) from None
        width = len(header)
        try:
            for fields in reader:
                if not fields:
                    continue
                if len(fields) != width:
                    raise InputError(
                        f"expected {width} fields as in the header, found {len(fields)}",
                        path=str(path),
                        line=reader.line_num,
                    )
                rows.append(dict(zip(header, fields, strict=True)))
        except csv.Error as exc:
            raise InputError(f"malformed CSV: {exc}", path=str(path), line=reader.line_num) from None
    return rows


def read_parquet(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a Parquet file into a list of dicts (needs pyarrow)."""
    file = existing_file(path)
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(file)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"not a readable Parquet file: {exc}", path=str(path)) from None
    return table.to_pylist()


def open_text(file: Path, newline: str | None = None) -> _Utf8File:
    """Open as UTF-8 (a BOM is accepted) to iterate its lines within the line limit (``bounded_lines``) or ``read``
    it whole; undecodable bytes surface as InputError naming the file."""
    return _Utf8File(file, newline)


class _Utf8File:
    """A UTF-8 text handle whose decoding errors become InputError with the file name."""

    def __init__(self, file: Path, newline: str | None) -> None:
        self._file = file
        self._handle = open(file, encoding="utf-8-sig", newline=newline)  # noqa: SIM115

    def __enter__(self) -> _Utf8File:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._handle.close()

    def __iter__(self) -> Iterator[str]:
        try:
            yield from bounded_lines(self._handle, self._file)
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 text ({exc.reason})", path=str(self._file)) from None

    def read(self) -> str:
        try:
            return self._handle.read()
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 text ({exc.reason})", path=str(self._file)) from None
