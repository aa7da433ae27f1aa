"""Atomic writes leave either the whole new file or nothing; names never collide."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ultra_kit.files import (
    atomic_write,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_jsonl,
    result_path,
    unique_path,
)


def test_atomic_write_json_round_trips_and_uses_normal_permissions(tmp_path: Path) -> None:
    target = atomic_write_json(tmp_path / "sub" / "r.json", {"ß": [1, 2.5]})
    assert json.loads(target.read_text(encoding="utf-8")) == {"ß": [1, 2.5]}
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()


def test_atomic_write_bytes_writes_the_bytes_with_normal_permissions(tmp_path: Path) -> None:
    """Bytes as they are (no newline translation, no redaction), 0666 less the umask as text files get."""
    data = b"\x89PNG\r\n\x1a\n\x00${X}\xff"
    target = atomic_write_bytes(tmp_path / "sub" / "plot.png", data)
    assert target.read_bytes() == data
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert sorted(p.name for p in target.parent.iterdir()) == ["plot.png"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_failed_write_leaves_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old", encoding="utf-8")

    def explode(handle) -> None:
        handle.write("partial")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, explode)
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_jsonl_writes_one_object_per_line(tmp_path: Path) -> None:
    target = atomic_write_jsonl(tmp_path / "rows.jsonl", iter([{"a": 1}, {"a": 2}]))
    assert [json.loads(line) for line in target.read_text().splitlines()] == [{"a": 1}, {"a": 2}]


def test_unique_path_counts_up(tmp_path: Path) -> None:
    first = tmp_path / "eval.json"
    assert unique_path(first) == first
    first.write_text("x")
    second = unique_path(first)
    assert second.name == "eval_1.json"
    second.write_text("x")
    assert unique_path(first).name == "eval_2.json"


def test_result_path_directory_and_file_forms(tmp_path: Path) -> None:
    in_dir = result_path(tmp_path / "out", "evaluate_trec")
    assert in_dir.parent == tmp_path / "out"
    assert in_dir.name.startswith("evaluate_trec_") and in_dir.suffix == ".json"
    named = tmp_path / "mine.json"
    named.write_text("{}")
    assert result_path(named, "evaluate_trec").name == "mine_1.json"


def test_result_path_reserves_the_name_and_hands_it_over_once(tmp_path: Path) -> None:
    first = result_path(tmp_path / "out", "t")
    assert first.exists() and first.stat().st_size == 0  # reserved: nobody else can take it
    second = result_path(tmp_path / "out", "t")
    assert second != first and second.name == first.stem + "_1.json"
    assert unique_path(first) == first  # still empty and ours: handed over, not skipped
    atomic_write_json(first, {"n": 1})
    assert unique_path(first).name == first.stem + "_2.json"  # written now: the next free name
    assert json.loads(first.read_text()) == {"n": 1}


def test_a_failed_write_releases_the_reserved_name(tmp_path: Path) -> None:
    reserved = result_path(tmp_path / "r.json", "t")

    def explode(handle) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        atomic_write(reserved, explode)
    assert list(tmp_path.iterdir()) == []


def test_a_tool_that_fails_after_reserving_its_result_name_leaves_no_file(tmp_path, monkeypatch) -> None:
    from ultra_kit.factory import with_settings
    from ultra_kit.files import result_path

    monkeypatch.chdir(tmp_path)

    def tool(*, save_path: str) -> dict:
        result_path(save_path, "tool")  # reserved ...
        raise ValueError("... then the computation fails")

    def sound(*, save_path: str) -> dict:
        return {"result_path": str(result_path(save_path, "sound"))}

    wrapped = with_settings(tool, {"save_path": "output/x"}, context_type=object, raise_as=RuntimeError)
    with pytest.raises(Exception, match="computation fails"):
        wrapped(save_path="output/x")
    assert not list((tmp_path / "output" / "x").iterdir())
    kept = with_settings(sound, {"save_path": "output/x"}, context_type=object, raise_as=RuntimeError)(
        save_path="output/x"
    )
    assert Path(kept["result_path"]).exists()  # a call that succeeds keeps what it reserved
