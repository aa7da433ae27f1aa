"""Runs and qrels from any source: a file path, an in-memory mapping, or an already read table."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ultra_base.errors import InputError
from ultra_trec.reading.io import read_qrels, read_run
from ultra_trec.table import Kind, TrecTable, check_duplicates


def load_run(run: str | os.PathLike[str] | Mapping[str, Any] | TrecTable, *, name: str = "run") -> TrecTable:
    """A run from a path, a ``{qid: {docid: score}}`` or ``{qid: [docid, ...]}`` mapping, or a table."""
    if isinstance(run, TrecTable):
        return run
    if isinstance(run, Mapping):
        return table_from_mapping(run, "run", name=name)
    return read_run(run)


def load_qrels(qrels: str | os.PathLike[str] | Mapping[str, Any] | TrecTable, *, name: str = "qrels") -> TrecTable:
    """Qrels from a path, a ``{qid: {docid: grade}}`` mapping, or a table."""
    if isinstance(qrels, TrecTable):
        return qrels
    if isinstance(qrels, Mapping):
        return table_from_mapping(qrels, "qrels", name=name)
    return read_qrels(qrels)


def table_from_mapping(data: Mapping[str, Any], kind: Kind, *, name: str) -> TrecTable:
    """Columns from ``{qid: {docid: value}}``; a run may also give ``{qid: [docid, ...]}`` in rank order.

    A ranked list gets scores ``n, n-1, ..., 1`` so the given order is the ranking.
    """
    import pyarrow as pa

    qids: list[str] = []
    codes: list[int] = []
    docids: list[str] = []
    values: list[Any] = []
    for qid, docs in data.items():
        qid_text = _id_text(qid, f"{name} query id")
        code = len(qids)
        qids.append(qid_text)
        if kind == "run" and isinstance(docs, Sequence) and not isinstance(docs, (str, bytes)):
            if len(set(map(str, docs))) != len(docs):
                raise InputError(f"{name}[{qid_text!r}] lists a docid twice; each docid may appear once per query")
            docs = {doc: float(len(docs) - i) for i, doc in enumerate(docs)}
        if not isinstance(docs, Mapping):
            raise InputError(
                f"{name}[{qid_text!r}] must map docid to {'score' if kind == 'run' else 'grade'}, "
                f"got {type(docs).__name__}"
            )
        for docid, value in docs.items():
            docids.append(_id_text(docid, f"{name}[{qid_text!r}] docid"))
            codes.append(code)
            values.append(_mapping_value(value, kind, f"{name}[{qid_text!r}][{docid!r}]"))
    if not values:
        raise InputError(f"{name} is empty; expected at least one query with documents")
    if len(set(qids)) != len(qids):
        raise InputError(f"{name} has two query ids that read the same as text; make query ids unique")
    dtype = np.float64 if kind == "run" else np.int64
    table = TrecTable(
        kind=kind,
        source=name,
        qids=qids,
        qid_codes=np.asarray(codes, dtype=np.int32),
        docids=pa.chunked_array([pa.array(docids, type=pa.binary())]),
        values=np.asarray(values, dtype=dtype),
    )
    check_duplicates(table)
    return table


def _id_text(value: Any, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{what} must be a string, got {type(value).__name__} {value!r}")
    text = str(value)
    if not text or any(ch.isspace() for ch in text):
        raise InputError(f"{what} {text!r} must be non-empty and contain no white space")
    return text


def _mapping_value(value: Any, kind: Kind, where: str) -> float | int:
    if kind == "qrels":
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise InputError(f"{where}: relevance must be an integer, got {value!r}")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{where}: score must be a number, got {value!r}")
    if value != value:
        raise InputError(f"{where}: score is NaN; scores must be numbers")
    return float(value)
