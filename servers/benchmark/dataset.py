"""Turn records into the pipeline's aligned column lists through a key_map; drop, shuffle, limit."""

from __future__ import annotations

import gc
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import is_
from typing import Any

from servers.benchmark.fields import MISSING, field_value
from servers.benchmark.formats import Record, Records, read_records
from servers.benchmark.selection import FILTERED, select
from ultra_base.errors import InputError
from ultra_base.nested import leaves
from ultra_kit.readers import shown_field_names
from ultra_kit.settings import defaults

OUTPUT_VARIABLES = ("q_ls", "gt_ls", "pred_ls", "id_ls", "ctx_ls", "answerability_ls", "idk_ls")  # the usual ones
GROUP_VARIABLE = "group_ls"  # benchmark.group_by's column: the slice of each item (report, compare)
RESERVED_VARIABLES = ("data_info", GROUP_VARIABLE)  # get_data's own output


@dataclass
class LoadedData:
    """Aligned columns (one entry per kept record), what was dropped and why, and the reader's notes."""

    columns: dict[str, list[Any]]
    total_rows: int
    dropped: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)

    @property
    def kept_rows(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0


def load_dataset(
    path: str,
    key_map: dict[str, str],
    *,
    limit: int,
    shuffle: bool,
    seed: int,
    fmt: str,
    split: str | None,
    max_bytes: int,
    settings: dict[str, Any] | None = None,
) -> LoadedData:
    """Read ``path`` and return the columns named by ``key_map`` (variable -> source field).

    A record missing any mapped field (or holding null or NaN there) is dropped whole, so the columns
    never shift against each other. Dropping happens first, then the seeded shuffle, then ``limit``.
    Rows the reader itself left out (a BEIR qrels query without its query) count as dropped too.
    A file larger than ``max_bytes`` is refused unread. When no record is left (an empty file, or every
    record dropped) it raises InputError with the number read and the drop reasons: never empty lists.
    """
    check_key_map(key_map)
    check_limit(limit)
    check_max_bytes(max_bytes)
    settings = complete_nested(settings) if settings else {}
    paused = gc.isenabled()
    gc.disable()  # a large file builds many objects and no cycles: the collector's passes would cost more
    try:
        return _load(path, key_map, limit, shuffle, seed, fmt, split, max_bytes, settings)
    finally:
        if paused:
            gc.enable()


def _load(
    path: str,
    key_map: dict[str, str],
    limit: int,
    shuffle: bool,
    seed: int,
    fmt: str,
    split: str | None,
    max_bytes: int,
    settings: dict[str, Any],
) -> LoadedData:
    records = read_records(path, fmt, split, max_bytes=max_bytes, settings=settings)
    dropped: Counter[str] = Counter(records.dropped) if isinstance(records, Records) else Counter()
    notes: Counter[str] = Counter(records.notes) if isinstance(records, Records) else Counter()
    total = len(records) + sum(dropped.values())
    if not records:
        raise InputError(nothing_kept(total, dropped), path=path)
    check_fields_exist(records, key_map, path)
    if settings:  # a field named by a setting that no record has is a typo (dedup would keep one record)
        named = {
            "dedup": settings["dedup"],
            "sample.by": settings["sample"]["by"],
            "group_by": settings.get("group_by"),
        }
        check_fields_exist(records, {setting: name for setting, name in named.items() if name}, path, "benchmark.")
    sources = list(dict.fromkeys(key_map.values()))
    clean = _clean_columns(records, sources)
    kept: list[Record] = list(records) if clean is not None else []
    for record in records if clean is None else ():  # the per-record checks name what they drop
        values = [record[source] if source in record else field_value(record, source) for source in sources]
        for source, value in zip(sources, values, strict=True):  # a missing field is named before a NaN
            if value is MISSING or value is None:
                dropped[f"missing or null field '{source}'"] += 1
                break
        else:
            for source, value in zip(sources, values, strict=True):
                if value.__class__ is not str and holds_nan(value):
                    dropped[f"NaN in field '{source}'"] += 1  # JSON NaN would become null in the lists
                    break
            else:
                kept.append(record)
    if settings:
        kept, left_out = select(kept, settings["filters"], settings["dedup"], settings["sample"])
        dropped.update(left_out)
    if not kept:
        raise InputError(nothing_kept(total, dropped), path=path)
    if shuffle:
        random.Random(seed).shuffle(kept)
    if limit != -1:
        kept = kept[:limit]
    if clean is not None and len(kept) == len(records) and all(map(is_, kept, records)):  # every record, in order
        columns = {variable: clean.pop(source, None) or _column(kept, source) for variable, source in key_map.items()}
    else:
        columns = {variable: _column(kept, source) for variable, source in key_map.items()}
    if settings.get("group_by"):
        columns[GROUP_VARIABLE] = [_group(r, settings["group_by"]) for r in kept]
    return LoadedData(columns=columns, total_rows=total, dropped=dropped, notes=notes)


NESTED_SETTINGS = ("traces", "filters", "sample")  # mappings inside benchmark with fixed keys of their own


def complete_nested(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` (the benchmark setting) with the keys left out of traces, filters and sample taken from
    parameter.yaml; an unknown key there is an error listing the known ones."""
    base = defaults("benchmark")["benchmark"]
    completed = dict(spec)
    for name in NESTED_SETTINGS:
        given = spec.get(name) or {}
        if not isinstance(given, dict):
            raise InputError(f"benchmark.{name} must be a mapping with keys {sorted(base[name])}")
        unknown = sorted(set(given) - set(base[name]))
        if unknown:
            raise InputError(f"benchmark.{name} has unknown keys {unknown}; known keys: {sorted(base[name])}")
        completed[name] = {**base[name], **given}
    return completed


def _column(kept: list[Record], source: str) -> list[Any]:
    """The values of ``source`` in ``kept``, a top-level field without a call per record."""
    try:
        return [record[source] for record in kept]
    except KeyError:  # not a top-level field of every record
        return [field_value(record, source) for record in kept]


NO_NAN = frozenset({str, int, bool, type(None)})  # the types of values that neither are nor hold a NaN


def _clean_columns(records: list[Record], sources: list[str]) -> dict[str, list[Any]] | None:
    """Each source's column when every record holds every source as a top-level field, none null and none NaN (a clean
    file), checked in C-level passes; else None, and the records go through the per-record checks, which name what
    they drop."""
    columns = {}
    for source in sources:
        try:
            column = [record[source] for record in records]
        except KeyError:
            return None
        if any(map(is_, column, repeat(None))):  # by identity: a value's own == is never called
            return None
        kinds = set(map(type, column))
        if kinds == {list}:  # lists (of passages): the types of their items
            kinds = set(map(type, chain.from_iterable(column)))
        if not kinds <= NO_NAN and any(map(holds_nan, column)):
            return None
        columns[source] = column
    return columns


def _group(record: Record, name: str) -> Any:
    value = field_value(record, name)
    return None if value is MISSING else value


def nothing_kept(total: int, dropped: Counter[str]) -> str:
    """Why no record is left: none read, or how many were read and every drop reason with its count."""
    if not total:
        return "the dataset holds no records (read 0); give a file with at least one record"
    reasons = ", ".join(f"{reason}: {count}" for reason, count in dropped.most_common())
    filtered = [reason for reason in dropped if reason.startswith(FILTERED)]
    hint = (
        "fix those fields in the data, or map other fields in benchmark.key_map"
        if len(filtered) < len(dropped)
        else "no record passes benchmark.filters: loosen them"
    )
    return f"no record kept: read {total} record{'s' if total != 1 else ''} and dropped every one ({reasons}); {hint}"


def check_key_map(key_map: dict[str, str]) -> None:
    """key_map must map output variables (any pipeline variable name, e.g. ``choices_ls``) to field names."""
    if not isinstance(key_map, dict) or not key_map:
        raise InputError(
            f"benchmark.key_map must map output variables (e.g. {', '.join(OUTPUT_VARIABLES)}) to source fields"
        )
    for variable, source in key_map.items():
        if not isinstance(variable, str) or not variable.isidentifier() or variable in RESERVED_VARIABLES:
            reserved = ", ".join(RESERVED_VARIABLES)
            raise InputError(
                f"benchmark.key_map: '{variable}' cannot be an output variable; use a name such as "
                f"{', '.join(OUTPUT_VARIABLES)} or choices_ls (a Python identifier, not {reserved})"
            )
        if not isinstance(source, str) or not source:
            raise InputError(f"benchmark.key_map.{variable} must be a field name (a string), not {source!r}")


def check_limit(limit: int) -> None:
    """limit is -1 (all records) or a positive count."""
    if isinstance(limit, bool) or not isinstance(limit, int) or (limit < 1 and limit != -1):
        raise InputError(f"benchmark.limit must be -1 (all records) or a positive number, not {limit!r}")


def check_max_bytes(max_bytes: int) -> None:
    """max_bytes is a positive number of bytes."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise InputError(f"benchmark.max_bytes must be a positive number of bytes, not {max_bytes!r}")


def check_fields_exist(records: list[Record], key_map: dict[str, str], path: str, prefix: str = "key_map.") -> None:
    """A mapped field (or one a setting names: ``prefix`` "benchmark.") that no record has is a typo, not missing
    data: fail naming it."""
    for variable, source in key_map.items():
        if not any(field_value(record, source) is not MISSING for record in records):
            first = records[0]
            fields = shown_field_names(sorted(k for k in first if k != "_line"))
            hint = ""
            if source.startswith("metadata.") and isinstance(first.get("metadata"), dict) and "trace_id" in first:
                hint = " (a trace's metadata holds the attributes named in benchmark.traces.metadata)"
            raise InputError(
                f"field '{source}' ({prefix}{variable}) is in no record; line {first.get('_line')} has fields "
                f"{fields}{hint}",
                path=path,
            )


def holds_nan(value: Any) -> bool:
    """True if ``value`` is NaN or holds one in a nested list or object (walked without recursion)."""
    kind = value.__class__
    if kind is str or kind is int or value is None:  # the common cases first: no walk
        return False
    if kind is list:  # a list of strings (passages): one pass, no walk
        for item in value:
            if item.__class__ is not str and item is not None:
                break
        else:
            return False
    return any(isinstance(item, float) and math.isnan(item) for item in leaves(value))
