"""ultra_base.redact: which values count as secrets and where they are replaced."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pydantic import BaseModel

from ultra_base import redact
from ultra_kit.settings import expand_env


class Row(BaseModel):
    name: str
    items: list[str]


def test_expanded_values_are_redacted_except_short_ones_and_paths(tmp_path: Path) -> None:
    env = {"TOKEN": "tok-4e2f9c1d", "SHORT": "ab1", "DATA": str(tmp_path)}
    assert expand_env("${DATA}/x?k=${TOKEN}&s=${SHORT}", env) == f"{tmp_path}/x?k=tok-4e2f9c1d&s=ab1"
    value = {"url": f"{tmp_path}/x?k=tok-4e2f9c1d&s=ab1", "n": 3, "list": ("tok-4e2f9c1d", ["ab1"])}
    assert redact.redact(value) == {"url": f"{tmp_path}/x?k=***&s=ab1", "n": 3, "list": ("***", ["ab1"])}
    assert redact.redact(Row(name="tok-4e2f9c1d!", items=["a"])) == Row(name="***!", items=["a"])


def test_log_records_and_tracebacks_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    expand_env("${T}", {"T": "log-secret-99"})
    logger = logging.getLogger("ultra.test")
    with caplog.at_level(logging.INFO, logger="ultra.test"):
        logger.info("calling %s", "http://h/?key=log-secret-99")
        try:
            raise ValueError("bad log-secret-99")
        except ValueError:
            logger.exception("failed")
    assert caplog.records[0].getMessage() == "calling http://h/?key=***"
    assert "ValueError: bad ***" in caplog.text and "log-secret-99" not in caplog.text


def test_files_written_through_atomic_write_hold_no_secret(tmp_path: Path) -> None:
    from ultra_kit.files import atomic_write, atomic_write_json, atomic_write_jsonl

    expand_env("${S}", {"S": "file-secret-42"})
    atomic_write_json(tmp_path / "r.json", {"model": "file-secret-42", "n": 1})
    atomic_write_jsonl(tmp_path / "r.jsonl", [{"a": "x file-secret-42 y"}, {"a": "z"}])
    atomic_write(tmp_path / "r.trec", lambda handle: handle.writelines(["q file-secret-42\n", "q d\n"]))
    assert (tmp_path / "r.json").read_text() == '{\n  "model": "***",\n  "n": 1\n}'
    assert (tmp_path / "r.jsonl").read_text() == '{"a": "x *** y"}\n{"a": "z"}\n'
    assert (tmp_path / "r.trec").read_text() == "q ***\nq d\n"
