"""Reading a corpus: id and text fields, titles, duplicate ids, fingerprints."""

from __future__ import annotations

from pathlib import Path

import pytest

from servers.retriever.corpus import fingerprint, load_corpus
from tests.retriever.conftest import write_corpus
from ultra_base.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


def test_fields_and_title(tmp_path: Path) -> None:
    path = write_corpus(
        tmp_path,
        [
            {"_id": 7, "title": "Head", "text": "body"},
            {"docid": "x", "contents": "Head line\nrest", "title": "Head line"},
        ],
    )
    passages = load_corpus(path)
    assert [(p.id, p.text) for p in passages] == [("7", "Head\nbody"), ("x", "Head line\nrest")]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], "appears twice"),
        ([{"id": "a"}], "needs an id"),
        ([{"id": "a b", "text": "x"}], "white space"),
    ],
)
def test_bad_corpora(tmp_path: Path, rows: list[dict], message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_corpus(write_corpus(tmp_path, rows))


def test_empty_corpus(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text("\n")
    with pytest.raises(InputError, match="empty"):
        load_corpus(tmp_path / "c.jsonl")


def test_fingerprint_follows_the_bytes(tmp_path: Path) -> None:
    path = write_corpus(tmp_path, [{"id": "a", "text": "x"}])
    before = fingerprint(path)
    write_corpus(tmp_path, [{"id": "a", "text": "y"}])
    assert fingerprint(path) != before


def test_the_shipped_corpus_matches_the_shipped_qrels() -> None:
    ids = {p.id for p in load_corpus(ROOT / "data/rag/corpus.jsonl")}
    judged = {line.split()[2] for line in (ROOT / "data/rag/qrels.trec").read_text().splitlines()}
    assert len(ids) == 371 and judged <= ids


def test_a_fingerprint_is_read_once_while_the_file_is_unchanged(tmp_path: Path, monkeypatch) -> None:
    """A sweep's server asks once a trial: the bytes are hashed again only after a write, even one that keeps the
    size and puts the modification time back (the change time moves)."""
    import hashlib
    import os

    from servers.retriever import corpus

    hashed = []
    sha256 = hashlib.sha256
    monkeypatch.setattr(corpus.hashlib, "sha256", lambda: hashed.append(1) or sha256())
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"id": "a", "text": "one"}\n', encoding="utf-8")
    first = corpus.fingerprint(path)
    assert corpus.fingerprint(path) == first and len(hashed) == 1
    times = os.stat(path)
    path.write_text('{"id": "a", "text": "two"}\n', encoding="utf-8")  # the same size
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
    second = corpus.fingerprint(path)
    assert second != first and second == sha256(path.read_bytes()).hexdigest() and len(hashed) == 2


def _bytes_read() -> int:
    """The bytes this process has read so far (``rchar`` of /proc/self/io: every read call, cached or not)."""
    for row in Path("/proc/self/io").read_text().splitlines():
        if row.startswith("rchar:"):
            return int(row.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts the bytes read with /proc/self/io (Linux)")
def test_a_line_over_the_limit_is_refused_before_the_bytes_after_it_are_hashed(tmp_path: Path) -> None:
    """A 3 GB corpus whose second line has no end (a sparse file: no disk is used) was hashed whole, 3 GB, before
    load_corpus refused the line; the fingerprint now refuses it, as load_corpus does, once its bytes show it."""
    from ultra_base.line_limits import MAX_LINE_CHARS

    path = tmp_path / "big.jsonl"
    path.write_text('{"id": "a", "text": "one"}\n', encoding="utf-8")
    with path.open("r+b") as handle:
        handle.truncate(3 * 1024**3)
    before = _bytes_read()
    with pytest.raises(InputError, match=f"big.jsonl:2: a line longer than {MAX_LINE_CHARS:,} characters") as caught:
        fingerprint(path)
    read = _bytes_read() - before
    assert read < 4 * MAX_LINE_CHARS, f"{read:,} bytes read"  # the line's first 64 MiB, hashed, then read as text
    with pytest.raises(InputError) as from_load:
        load_corpus(path)
    assert str(caught.value) == str(from_load.value)  # file, line, limit and what to do: one message


def test_a_line_of_many_multi_byte_characters_within_the_limit_is_hashed_whole(tmp_path: Path) -> None:
    """More bytes than the limit, fewer characters: the line is within it, and the hash is the file's bytes'."""
    import hashlib

    from ultra_base.line_limits import MAX_LINE_CHARS

    text = "é" * (MAX_LINE_CHARS // 2 + 1000)  # two bytes each: over the limit in bytes only
    path = tmp_path / "corpus.jsonl"
    path.write_text(f'{{"id": "a", "text": "{text}"}}\n{{"id": "b", "text": "two"}}\n', encoding="utf-8")
    assert path.stat().st_size > MAX_LINE_CHARS
    assert fingerprint(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [len(p.text) for p in load_corpus(path)] == [len(text), 3]
