"""The (query, passage) pairs a judge reads: inline, or from a queries file, a TREC run and a corpus.

Queries: JSONL (``qid``/``query_id``/``_id``/``id`` and ``query``/``text``/``question``/``title``)
or TSV (``qid<TAB>query`` per line, an optional header line). Corpus: JSONL with a docid field
(``docid``/``doc_id``/``_id``/``id``/``document_id``) and text (``text``/``contents``/``passage``/
``body``), an optional ``title`` put before the text; only the documents the run needs are kept.
The run is ranked as trec_eval ranks it (score descending, ties by docid descending) and cut at
``depth``. Every mistake raises InputError naming the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, existing_file
from ultra_kit.readers import jsonl_rows, open_text

QID_KEYS = ("qid", "query_id", "_id", "id")
QUERY_KEYS = ("query", "text", "question", "title")
DOCID_KEYS = ("docid", "doc_id", "_id", "id", "document_id")
TEXT_KEYS = ("text", "contents", "passage", "body")


@dataclass(frozen=True)
class Pair:
    """One item to judge: the query, the passage and the passage's rank in its list (1-based)."""

    qid: str
    query: str
    docid: str
    passage: str
    rank: int


def inline_pairs(query: str, passages: Mapping[str, str] | Sequence[str], *, query_id: str = "q1") -> list[Pair]:
    """Pairs for one query and its passages, given as ``{docid: text}`` or a list (docids "1", "2", ...)."""
    if not isinstance(query, str) or not query.strip():
        raise InputError("query must be a non-empty string")
    if isinstance(passages, Mapping):
        items = [(str(docid), text) for docid, text in passages.items()]
    elif isinstance(passages, Sequence) and not isinstance(passages, str):
        items = [(str(i), text) for i, text in enumerate(passages, start=1)]
    else:
        raise InputError("passages must be a {docid: text} mapping or a list of texts")
    if not items:
        raise InputError("passages is empty: give at least one passage to judge")
    pairs = []
    for rank, (docid, text) in enumerate(items, start=1):
        if not isinstance(text, str):
            raise InputError(f"passage {docid!r} is a {type(text).__name__}, expected text")
        pairs.append(Pair(query_id, query, docid, text, rank))
    return pairs


def file_pairs(
    queries_path: str | os.PathLike[str],
    run_path: str | os.PathLike[str],
    corpus_path: str | os.PathLike[str],
    *,
    depth: int,
) -> list[Pair]:
    """Pairs for the top ``depth`` documents of every query of the run."""
    if not isinstance(depth, int) or depth < 1:
        raise InputError(f"depth must be a positive integer, got {depth!r}")
    queries = read_queries(queries_path)
    ranked = top_documents(run_path, depth=depth)
    for qid in ranked.docids:
        if qid not in queries:
            raise InputError(
                f"query {qid!r} of the run is not in the queries file {queries_path}",
                path=str(run_path),
                line=ranked.line_of(qid),
            )
    wanted = {docid for docids in ranked.docids.values() for docid in docids}
    texts = read_corpus(corpus_path, wanted)
    missing = wanted - texts.keys()
    if missing:
        example = sorted(missing)[:5]
        raise InputError(
            f"{len(missing)} documents of the run are not in the corpus {corpus_path}, e.g. {example}",
            path=str(run_path),
        )
    return [
        Pair(qid, queries[qid], docid, texts[docid], rank)
        for qid, docids in ranked.docids.items()
        for rank, docid in enumerate(docids, start=1)
    ]


def read_queries(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{qid: query text}`` from a JSONL or TSV file."""
    file = existing_file(path, what="queries file")
    queries: dict[str, str] = {}
    rows = _tsv_rows(file) if file.suffix.lower() in (".tsv", ".txt") else jsonl_rows(file)
    for line, row in rows:
        qid = _field(row, QID_KEYS, file, line, "query id")
        text = _field(row, QUERY_KEYS, file, line, "query text")
        if qid in queries:
            raise InputError("a query id appears twice", path=str(file), line=line)
        queries[qid] = text
    if not queries:
        raise InputError("no queries in the file", path=str(file))
    return queries


def read_corpus(path: str | os.PathLike[str], wanted: set[str] | None = None) -> dict[str, str]:
    """``{docid: title + text}`` for the documents in ``wanted`` (all when None), streamed."""
    file = existing_file(path, what="corpus file")
    texts: dict[str, str] = {}
    for line, row in jsonl_rows(file):
        docid = _field(row, DOCID_KEYS, file, line, "document id")
        if wanted is not None and docid not in wanted:
            continue
        body = _field(row, TEXT_KEYS, file, line, "document text", allow_empty=True)
        title = row.get("title")
        texts[docid] = f"{title}\n{body}" if isinstance(title, str) and title.strip() else body
    return texts


@dataclass
class RankedRun:
    """The top documents of each query of a run, in trec_eval order, and where each query starts."""

    docids: dict[str, list[str]]
    _first_row: dict[str, int]
    _table: Any

    def line_of(self, qid: str) -> int | None:
        """The line of the query's first row in the run file (for messages)."""
        return self._table.line_of(self._first_row[qid])


def top_documents(path: str | os.PathLike[str], *, depth: int) -> RankedRun:
    """The run ranked as trec_eval ranks it (score descending, then docid descending), cut at ``depth``."""
    from ultra_trec.reading.io import read_run
    from ultra_trec.table import check_duplicates

    table = read_run(path)
    check_duplicates(table)
    raw = table.docids.to_pylist()  # bytes (or str): sort on the bytes, as trec_eval does
    keys = [d if isinstance(d, bytes) else d.encode("utf-8", "surrogateescape") for d in raw]
    docids = [k.decode("utf-8", "surrogateescape") for k in keys]
    scores = table.values.tolist()
    rows_by_query: dict[int, list[int]] = {}
    for row, code in enumerate(table.qid_codes.tolist()):
        rows_by_query.setdefault(code, []).append(row)
    ranked: dict[str, list[str]] = {}
    first_row: dict[str, int] = {}
    for code, rows in rows_by_query.items():
        qid = table.qids[code]
        first_row[qid] = rows[0]
        rows = sorted(rows, key=lambda r: keys[r], reverse=True)
        rows.sort(key=lambda r: scores[r], reverse=True)  # stable: equal scores keep docid descending
        ranked[qid] = [docids[r] for r in rows[:depth]]
    return RankedRun(ranked, first_row, table)


def _tsv_rows(file: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with open_text(file) as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) != 2:
                raise InputError(
                    f"expected 2 tab-separated fields (qid, query), found {len(fields)}",
                    path=str(file),
                    line=line_number,
                )
            if line_number == 1 and fields[0].strip().lower() in QID_KEYS:
                continue  # a header line
            yield line_number, {"qid": fields[0].strip(), "query": fields[1].strip()}


def _field(
    row: dict[str, Any], keys: tuple[str, ...], file: Path, line: int, what: str, *, allow_empty: bool = False
) -> str:
    for key in keys:
        if key in row and row[key] is not None:
            value = row[key]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = str(value)
            if not isinstance(value, str) or (not allow_empty and not value.strip()):
                raise InputError(f"field {key!r} ({what}) must be a non-empty string", path=str(file), line=line)
            return value.strip() if what.endswith("id") else value
    raise InputError(f"no {what}: expected one of the fields {list(keys)}", path=str(file), line=line)
