"""Reading a passage corpus (JSON Lines) and fingerprinting it, so a saved index knows what it indexed."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from ultra_base.errors import InputError, existing_file
from ultra_base.line_limits import LineBytes
from ultra_kit.readers import check_line_lengths, read_jsonl, shown_field_names

ID_FIELDS = ("id", "_id", "docid", "doc_id")
TEXT_FIELDS = ("contents", "text", "passage")
MAX_REMEMBERED = 64  # corpus fingerprints this process keeps
_FINGERPRINTS: dict[str, tuple[tuple[int, ...], str]] = {}  # path -> (its stat key, its SHA-256)


@dataclass(frozen=True)
class Passage:
    """One retrievable passage: its id and the text that is indexed and returned."""

    id: str
    text: str


def passage_from_record(record: dict, path: str, line: int) -> Passage:
    """A Passage from a corpus record: id from id/_id/docid, text from contents/text (title prepended if absent)."""
    doc_id = next((record[f] for f in ID_FIELDS if record.get(f) not in (None, "")), None)
    text = next((record[f] for f in TEXT_FIELDS if isinstance(record.get(f), str)), None)
    if doc_id is None or text is None:
        raise InputError(
            f"a corpus record needs an id ({'/'.join(ID_FIELDS)}) and a text ({'/'.join(TEXT_FIELDS)}); "
            f"found fields {shown_field_names(sorted(record))}",
            path=path,
            line=line,
        )
    doc_id = str(doc_id)
    if any(ch.isspace() for ch in doc_id):
        raise InputError("a document id contains white space, which a TREC run cannot hold", path=path)
    title = record.get("title")
    if isinstance(title, str) and title.strip() and not text.startswith(title.strip()):
        text = f"{title.strip()}\n{text}"
    return Passage(doc_id, text)


def load_corpus(path: str | os.PathLike[str]) -> list[Passage]:
    """The passages of a JSONL corpus, in file order; duplicate ids and an empty corpus are errors."""
    file = existing_file(path, what="corpus file")
    passages: list[Passage] = []
    seen: set[str] = set()
    for number, record in enumerate(read_jsonl(file), start=1):
        item = passage_from_record(record, str(path), number)
        if item.id in seen:
            raise InputError("a document id appears twice; ids must be unique", path=str(path), line=number)
        seen.add(item.id)
        passages.append(item)
    if not passages:
        raise InputError("the corpus is empty; expected one JSON object per line with an id and a text", path=str(path))
    return passages


def fingerprint(path: str | os.PathLike[str]) -> str:
    """SHA-256 of the corpus file's bytes: an index built from other bytes is stale.

    A line over the line limit is refused (the InputError ``load_corpus`` would raise) once the bytes read show it,
    not after hashing the gigabytes that follow it (a file with no line end is one line).

    Remembered for as long as the file's identity, size and times are the same (a server asked once per trial of
    a sweep reads a large corpus once, not once a trial); a write changes its change time, which no one can set."""
    file = existing_file(path, what="corpus file")
    with open(file, "rb") as handle:
        status = os.fstat(handle.fileno())
        key = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
        known = _FINGERPRINTS.get(str(file))
        if known is not None and known[0] == key:
            return known[1]
        digest = hashlib.sha256()
        line: LineBytes | None = LineBytes()
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            if line is not None and line.passes_limit(block):
                check_line_lengths(file)  # load_corpus's refusal, reading up to the line: not gigabytes past it
                line = None  # its characters were within the limit (multi-byte ones), and every other line's were
    if len(_FINGERPRINTS) >= MAX_REMEMBERED:
        del _FINGERPRINTS[next(iter(_FINGERPRINTS))]  # the oldest
    _FINGERPRINTS[str(file)] = (key, digest.hexdigest())
    return digest.hexdigest()
