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


def test_a_number_a_setting_takes_is_no_secret_so_results_keep_their_digits(tmp_path: Path) -> None:
    """``max_tokens: ${MAX_TOKENS}`` (2048) must not turn a map of 0.12048 into 0.1***, nor a num_ret of 2048 into
    a bare *** (no longer JSON), nor ``recall@2048`` into ``recall@***``; a 13-digit number stays secret."""
    import json

    from ultra_kit.files import atomic_write_json, atomic_write_text, compact_json

    env = {"MAX_TOKENS": "2048", "TEMPERATURE": "0.75", "RATE": " 1e-5 ", "ACCOUNT": "9274051836402"}
    assert expand_env("${MAX_TOKENS} ${TEMPERATURE} ${RATE} ${ACCOUNT}", env) == "2048 0.75  1e-5  9274051836402"
    results = {"map": 0.12048, "num_ret": 2048, "recall@2048": 0.0075, "lr": 1e-05, "id": "acct 9274051836402"}
    atomic_write_json(tmp_path / "r.json", results)
    atomic_write_text(tmp_path / "c.json", compact_json(results))  # evaluate_trec's way: orjson text
    for name in ("r.json", "c.json"):
        assert json.loads((tmp_path / name).read_text()) == {**results, "id": "acct ***"}
    assert redact.redact_text("temperature 0.75, account 9274051836402") == "temperature 0.75, account ***"


def test_true_false_and_null_are_no_secrets(tmp_path: Path) -> None:
    """``overwrite: ${OVERWRITE}`` holding false must not turn every false of memory.json into a bare ***."""
    import json

    from ultra_kit.files import atomic_write_json

    expand_env("${OVERWRITE} ${EMPTY} ${SHOUT}", {"OVERWRITE": "false", "EMPTY": "null", "SHOUT": "TRUE"})
    record = {"overwrite": False, "cache": None, "done": True, "note": "false alarm, TRUE story"}
    atomic_write_json(tmp_path / "memory.json", record)
    assert json.loads((tmp_path / "memory.json").read_text()) == record


def test_what_reads_as_a_setting_value() -> None:
    numbers = ["2048", "-3600", "+1.5", "0.75", ".5e3", " 1e-5 ", "123456789012", "true", "False", "NULL", "none"]
    others = ["1234567890123", "tok-2048", "20.48.1", "0x1F", "1_000", "2048s", "nan", "inf", "1.2.3", "falsey"]
    assert [redact.setting_value(v) for v in numbers] == [True] * len(numbers)
    assert [redact.setting_value(v) for v in others] == [False] * len(others)
