"""Readers that turn each supported dataset format into a list of records (dicts), in file order.

The formats are the entries of ``READERS`` (at the end); every message that names formats or file
extensions is built from it. Every record carries ``_line``, the line (or record number) it came
from, for error messages.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers.benchmark.traces import reader as traces
from ultra_base.errors import InputError, existing_file, readable_path
from ultra_base.registry import Registry
from ultra_kit.readers import check_file_size, read_csv, read_json, read_jsonl, read_parquet

Record = dict[str, Any]
NAN_CELLS = frozenset({"NaN", "nan", "NAN"})  # a CSV/TSV cell that holds no value


class Records(list):
    """A reader's records, with the rows it left out (``dropped``, by reason) and other counts (``notes``)."""

    def __init__(self, rows: list[Record], dropped: Counter[str] | None = None, notes: Counter[str] | None = None):
        super().__init__(rows)
        self.dropped: Counter[str] = dropped if dropped is not None else Counter()
        self.notes: Counter[str] = notes if notes is not None else Counter()


def read_records(
    path: str,
    fmt: str = "auto",
    split: str | None = None,
    *,
    max_bytes: int | None = None,
    settings: dict[str, Any] | None = None,
) -> list[Record]:
    """Read the dataset at ``path`` in format ``fmt`` ("auto" detects it from the path and content).

    ``max_bytes`` (get_data passes ``benchmark.max_bytes``): a file to read that is larger is refused
    before anything is read; None reads any size. ``settings``: the ``benchmark`` setting, of which a
    format that declares ``settings`` (the trace formats: ``traces``) takes its key.
    """
    if not str(path).strip():
        raise InputError(f"benchmark.path is empty; give a dataset file ({', '.join(suffixes())}) or {folder_words()}")
    source = readable_path(path, setting="benchmark.path")  # refused unopened outside the read roots
    if max_bytes is not None:
        for file in data_files(source, fmt, split):
            check_file_size(file, max_bytes=max_bytes, setting="benchmark.max_bytes")
    if source.is_file() and source.stat().st_size == 0:
        raise InputError("the file is empty (0 bytes): it holds no records", path=str(source))
    if fmt == "auto":
        fmt = detect_format(source)
    if fmt not in READERS:
        raise InputError(f"unknown format '{fmt}'; expected one of: auto, {', '.join(READERS)}")
    entry = READERS[fmt]
    if entry.settings:
        rows, dropped, notes = entry.read(source, (settings or {}).get(entry.settings) or {}, max_bytes)
        return Records(rows, dropped, notes)
    return entry.read(source, split)


def data_files(source: Path, fmt: str, split: str | None) -> list[Path]:
    """The files reading ``source`` opens: the file itself, or a BEIR folder's corpus, queries and qrels."""
    if not source.is_dir():
        return [source] if source.is_file() else []
    if fmt not in ("auto", "beir"):
        return []  # the reader refuses a folder
    files = [source / "corpus.jsonl", source / "queries.jsonl"]
    return [file for file in files if file.is_file()] + [_beir_qrels_file(source, split)]


def detect_format(source: Path) -> str:
    """Guess the format from the path: a folder is the folder format (BEIR); a file's suffix names its
    format, and when several formats share the suffix (.json) the file's content tells them apart."""
    if source.is_dir():
        return next(name for name, entry in READERS.items() if entry.folder)
    existing_file(source, what="dataset file")
    suffix = source.suffix.lower()
    sniffers = [name for name, entry in READERS.items() if entry.sniff and suffix in entry.suffixes]
    if sniffers:
        with open(source, "rb") as handle:
            head = handle.read(65536)
        found = next((name for name in sniffers if READERS[name].sniff(head)), None)  # type: ignore[misc]
        if found:
            return found
    named = [name for name, entry in READERS.items() if suffix in entry.suffixes and not entry.sniff]
    if len(named) == 1:
        return named[0]
    if not named:
        raise InputError(
            f"unsupported file extension '{suffix}'; expected {', '.join(suffixes())} or {folder_words()}",
            path=str(source),
        )
    data = read_json(source)
    for name in named:
        if READERS[name].matches(data):
            return name
    layouts = [f"{READERS[name].words} ({READERS[name].layout})" for name in named]
    raise InputError(
        f"cannot tell the layout of this {suffix} file: expected {', '.join(layouts[:-1])} or {layouts[-1]}; "
        "set benchmark.format",
        path=str(source),
    )


def suffixes() -> list[str]:
    """Every file extension a format is detected by, in ``READERS`` order."""
    return list(dict.fromkeys(suffix for entry in READERS.values() for suffix in entry.suffixes))


def folder_words() -> str:
    """The folder formats in words ("a BEIR folder")."""
    return " or ".join(f"a {entry.words} folder" for entry in READERS.values() if entry.folder)


def _numbered(rows: list[Record], start: int) -> list[Record]:
    for offset, row in enumerate(rows):
        row["_line"] = start + offset
    return rows


def _csv_rows(source: Path) -> list[Record]:
    """CSV/TSV rows; a cell reading NaN (how numpy and others write a missing number) becomes float NaN, so that
    the record is dropped as one holding JSON's NaN is."""
    rows = read_csv(source)
    for row in rows:
        for name, value in row.items():
            if value in NAN_CELLS:
                row[name] = math.nan
    return _numbered(rows, start=2)


def _json_list(data: Any, path: str) -> list[Record]:
    if not isinstance(data, list):
        raise InputError(f"expected a JSON list of records, found a {type(data).__name__}", path=path)
    for index, row in enumerate(data):
        if not isinstance(row, dict):
            raise InputError(f"record {index} is a {type(row).__name__}, expected an object", path=path)
    return _numbered(data, start=0)


def read_squad(data: Any, path: str) -> list[Record]:
    """SQuAD v1/v2: ``data[].paragraphs[].qas[]`` -> one record per question.

    Fields: id, question, context, title, answers (list of answer texts), is_impossible.
    """
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise InputError("expected SQuAD JSON: an object with a 'data' list", path=path)
    records: list[Record] = []
    for article_index, article in enumerate(data["data"]):
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise InputError(f"data[{article_index}] has no 'paragraphs' list", path=path)
        for paragraph_index, paragraph in enumerate(paragraphs):
            where = f"data[{article_index}].paragraphs[{paragraph_index}]"
            if not isinstance(paragraph, dict) or not isinstance(paragraph.get("qas"), list):
                raise InputError(f"{where} has no 'qas' list", path=path)
            for qa_index, qa in enumerate(paragraph["qas"]):
                if not isinstance(qa, dict) or "question" not in qa:
                    raise InputError(f"{where}.qas[{qa_index}] has no 'question'", path=path)
                answers = qa.get("answers") or []
                records.append(
                    {
                        "id": qa.get("id"),
                        "question": qa["question"],
                        "context": paragraph.get("context"),
                        "title": article.get("title"),
                        "answers": [a["text"] for a in answers if isinstance(a, dict) and "text" in a],
                        "is_impossible": bool(qa.get("is_impossible", False)),
                        "_line": len(records),
                    }
                )
    return records


RAGAS_COLUMNS = ("question", "contexts", "answer", "ground_truths")
# RAGAS 0.2+ names its columns user_input, retrieved_contexts, response and reference.
RAGAS_QUESTION = ("question", "user_input")


def read_ragas(data: Any, path: str) -> list[Record]:
    """RAGAS: an object of equally long column lists, with the columns under the names they have.

    Before 0.2: question, contexts, answer, ground_truths; 0.2+: user_input, retrieved_contexts,
    response, reference. A list of row objects (0.2+ ``EvaluationDataset.to_list()``) is read as is.
    """
    if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
        if not any(name in data[0] for name in RAGAS_QUESTION):
            raise InputError(f"RAGAS rows need 'question' or 'user_input'; row 0 has {sorted(data[0])}", path=path)
        return _numbered(data, start=0)
    if not isinstance(data, dict):
        raise InputError("expected RAGAS JSON: an object of column lists", path=path)
    columns = {name: values for name, values in data.items() if isinstance(values, list)}
    question = next((name for name in RAGAS_QUESTION if name in columns), None)
    if question is None:
        raise InputError(
            f"RAGAS JSON needs a 'question' or 'user_input' list; columns found: {sorted(data)}", path=path
        )
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(
            f"RAGAS columns have different lengths {lengths}; every column needs one entry per question", path=path
        )
    count = lengths[question]
    return [{**{name: values[i] for name, values in columns.items()}, "_line": i} for i in range(count)]


def read_beir(folder: Path, split: str | None) -> Records:
    """A BEIR folder -> one record per judged query of the split.

    Fields: id, question, qrels ({docid: grade}), relevant_docs (ids with grade > 0, by grade then
    file order), relevant_passages (the corpus texts of those found in corpus.jsonl, "title text"
    when a title exists). A qrels query absent from queries.jsonl is dropped and counted; a qrels
    document absent from the corpus is kept (as BEIR's loader does) and counted in ``notes``.
    """
    if not folder.is_dir():
        raise InputError("BEIR dataset must be a folder with corpus.jsonl, queries.jsonl and qrels/", path=str(folder))
    qrels_file = _beir_qrels_file(folder, split)
    corpus = {str(row["_id"]): row for row in read_jsonl(folder / "corpus.jsonl") if "_id" in row}
    queries = read_jsonl(folder / "queries.jsonl")
    qrels = _read_beir_qrels(qrels_file)
    records: list[Record] = []
    for line, query in enumerate(queries, start=1):
        qid = str(query.get("_id", ""))
        if qid not in qrels:
            continue
        judged = qrels[qid]
        relevant = sorted((d for d, g in judged.items() if g > 0), key=lambda d: -judged[d])
        records.append(
            {
                "id": qid,
                "question": query.get("text"),
                "qrels": judged,
                "relevant_docs": relevant,
                "relevant_passages": [_passage_text(corpus[d]) for d in relevant if d in corpus],
                "_line": line,
            }
        )
    known = {str(query.get("_id", "")) for query in queries}
    dropped = Counter({f"qrels query not in queries.jsonl ({qrels_file.name})": sum(q not in known for q in qrels)})
    absent = sum(d not in corpus for judged in qrels.values() for d in judged)
    notes = Counter({f"qrels lines whose corpus-id is not in corpus.jsonl ({qrels_file.name})": absent})
    return Records(records, +dropped, +notes)


def _beir_qrels_file(folder: Path, split: str | None) -> Path:
    qrels_dir = folder / "qrels"
    available = sorted(p.stem for p in qrels_dir.glob("*.tsv")) if qrels_dir.is_dir() else []
    if not available:
        raise InputError("BEIR folder has no qrels/*.tsv file", path=str(folder))
    if split is None:
        split = "test" if "test" in available else available[0] if len(available) == 1 else None
    if split not in available:
        raise InputError(f"choose benchmark.split among {available}", path=str(qrels_dir))
    return qrels_dir / f"{split}.tsv"


def _read_beir_qrels(file: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], int] = {}
    with open(readable_path(file, setting="benchmark.path"), encoding="utf-8", newline="") as handle:
        for line_number, fields in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not fields or (line_number == 1 and not fields[-1].lstrip("-").isdigit()):
                continue  # blank line or the header row
            if len(fields) != 3:
                raise InputError(
                    f"expected 3 tab-separated fields (query-id, corpus-id, score), found {len(fields)}",
                    path=str(file),
                    line=line_number,
                )
            qid, docid, score = fields
            try:
                grade = int(score)
            except ValueError:
                raise InputError("the score (3rd field) is not an integer", path=str(file), line=line_number) from None
            if (qid, docid) in first_line:
                raise InputError(
                    f"the same query-id and corpus-id are judged twice, on lines {first_line[qid, docid]} "
                    f"and {line_number}; keep one",
                    path=str(file),
                    line=line_number,
                )
            first_line[qid, docid] = line_number
            qrels.setdefault(qid, {})[docid] = grade
    return qrels


def _passage_text(doc: Record) -> str:
    title, text = doc.get("title") or "", doc.get("text") or ""
    return f"{title} {text}".strip() if title else text


def _is_ragas(data: Any) -> bool:
    return isinstance(data, dict) and any(isinstance(data.get(name), list) for name in RAGAS_QUESTION)


@dataclass(frozen=True)
class Format:
    """A dataset format: its reader, the file extensions that name it, and (when several formats share an
    extension) how its content is recognised, with that shape in words for the error message."""

    name: str  # what ``format`` names it (``jsonl``)
    words: str  # its name in messages
    read: Callable[[Path, str | None], list[Record]]  # (path, split) -> records
    suffixes: tuple[str, ...] = ()
    folder: bool = False  # a folder (not a file) in this format
    matches: Callable[[Any], bool] = lambda _data: True  # the parsed content is in this format
    layout: str = ""
    sniff: Callable[[bytes], bool] | None = None  # recognised by the file's first 64 KiB, before its suffix
    settings: str = ""  # a key of the benchmark setting the reader takes instead of split: read(path, value)


# Format name -> Format: the one entry a new format needs.
READERS: Registry[Format] = Registry(
    "data format",
    [
        Format("jsonl", "JSON Lines", lambda source, _: _numbered(read_jsonl(source), start=1), (".jsonl", ".ndjson")),
        Format(
            "json",
            "JSON list",
            lambda source, _: _json_list(read_json(source), str(source)),
            (".json",),
            matches=lambda data: isinstance(data, list),
            layout="a list of records",
        ),
        Format("csv", "CSV", lambda source, _: _csv_rows(source), (".csv",)),
        Format("tsv", "TSV", lambda source, _: _csv_rows(source), (".tsv",)),
        Format("parquet", "Parquet", lambda source, _: _numbered(read_parquet(source), start=1), (".parquet",)),
        Format("beir", "BEIR", read_beir, folder=True),
        Format(
            "squad",
            "SQuAD",
            lambda source, _: read_squad(read_json(source), str(source)),
            (".json",),
            matches=lambda data: isinstance(data, dict) and isinstance(data.get("data"), list),
            layout="{'data': [...]}",
        ),
        Format(
            "ragas",
            "RAGAS",
            lambda source, _: read_ragas(read_json(source), str(source)),
            (".json",),
            matches=_is_ragas,
            layout="{'question' or 'user_input': [...], ...}",
        ),
        Format(
            "otlp",
            "OTLP JSON traces",
            lambda source, settings, max_bytes: traces.read_traces("otlp", source, settings, max_bytes),
            (".json", ".jsonl", ".ndjson"),
            sniff=traces.sniff_otlp,
            settings="traces",
        ),
        Format(
            "langfuse",
            "Langfuse traces export",
            lambda source, settings, max_bytes: traces.read_traces("langfuse", source, settings, max_bytes),
            (".json",),
            sniff=traces.sniff_langfuse,
            settings="traces",
        ),
        Format(
            "langsmith",
            "LangSmith runs export",
            lambda source, settings, max_bytes: traces.read_traces("langsmith", source, settings, max_bytes),
            (".jsonl", ".ndjson"),
            sniff=traces.sniff_langsmith,
            settings="traces",
        ),
    ],
)
