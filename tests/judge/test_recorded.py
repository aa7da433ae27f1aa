"""Recorded judgments: an answer judge reading each item's values from a file (``recorded_judgments``), sending
nothing; rows matched by id and answer, a missing row counted as a failure, a bad row named by file and line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from servers.judge.answers.run import build_items, run_answer_judge
from ultra_base.errors import InputError
from ultra_kit import failures

UNREACHABLE = {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model_id": "none", "api_key": "${UNSET_KEY}"}


def write_rows(path: Path, rows: list[object]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def judged(items: list[dict], replay: str, tmp_path: Path, fraction: float = 0.5) -> dict:
    return asyncio.run(
        run_answer_judge(
            "faithfulness", items, judge_llm=UNREACHABLE, judge_cache="", save_path=str(tmp_path / "out"),
            max_failed_fraction=fraction, prompt_file={}, language="en", replay=replay,
        )
    )  # fmt: skip


def test_rows_are_matched_by_id_and_answer_and_nothing_is_sent(tmp_path: Path) -> None:
    items = build_items(
        ["q1", "q1", "q2", "q3"], ["answer A", "answer B", "answer C", None], id_ls=["t1", "t1", "t2", "t3"]
    )
    path = write_rows(tmp_path / "r.jsonl", [
        {"id": "t1", "answer": "answer B", "faithfulness": 0.25, "system": "b"},
        {"id": "t1", "answer": "answer A", "faithfulness": 0.75, "system": "a"},
        {"id": "t2", "faithfulness": 1},  # no answer: the id alone matches
    ])  # fmt: skip
    result = judged(items, path, tmp_path)
    assert [(i["status"], i.get("faithfulness")) for i in result["items"]] == [
        ("ok", 0.75), ("ok", 0.25), ("ok", 1.0), ("unanswered", None)]  # fmt: skip
    assert result["aggregate"]["faithfulness"] == pytest.approx(2.0 / 3)
    assert result["usage"] == {"requests": 0, "recorded": path} and result["failed"]["count"] == 0
    written = json.loads(Path(result["result_path"]).read_text())
    assert written["settings"] == {"recorded_judgments": path} and written["panel"] == {}


def test_an_item_without_its_row_fails_and_counts(tmp_path: Path) -> None:
    items = build_items(["q1", "q2", "q3"], ["a", "b", "c"], id_ls=["t1", "t2", "t3"])
    rows = [{"id": "t1", "faithfulness": 0.5}, {"id": "t2", "answer": "other", "faithfulness": 1}]
    path = write_rows(tmp_path / "r.jsonl", [*rows, {"id": "t3", "faithfulness": None}])
    with pytest.raises(InputError, match="no recorded judgment for this id and answer"):
        judged(items, path, tmp_path)  # 2 of 3 failed: over max_failed_fraction
    result = judged(items, path, tmp_path, fraction=1.0)
    assert [i["status"] for i in result["items"]] == ["ok", "error", "error"]
    reasons = {"error": 2, "parse_error": 0}
    first = "no recorded judgment for this id and answer"
    assert result["failed"] == failures.FailedSummary(count=2, total=3, reasons=reasons, first_error=first)


def test_a_bad_row_is_named_by_file_and_line(tmp_path: Path) -> None:
    items = build_items(["q1"], ["a"], id_ls=["t1"])
    path = write_rows(tmp_path / "r.jsonl", [{"id": "t1", "faithfulness": 0.5}, {"answer": "a"}])
    with pytest.raises(InputError, match=r"r\.jsonl:2: expected a row \{id, answer, metric: value\}"):
        judged(items, path, tmp_path)
    path = write_rows(tmp_path / "s.jsonl", [{"id": "t1", "faithfulness": "high"}])
    with pytest.raises(InputError, match="faithfulness must be a finite number or null, got 'high'"):
        judged(items, path, tmp_path)


def test_chinese_answers_under_english_get_a_warning_naming_the_setting(tmp_path: Path) -> None:
    """#41: under the default language 'en' Chinese questions and answers were judged without a word; the judge
    returns a warning naming the setting (``ultra run`` prints a step's warning once per run), none under 'zh'."""
    items = build_items(
        ["牛顿是谁？", "黑豹队赢了吗？"], ["牛顿是一位物理学家。", "是的，他们赢了。"], id_ls=["t1", "t2"]
    )
    path = write_rows(tmp_path / "r.jsonl", [{"id": "t1", "faithfulness": 1}, {"id": "t2", "faithfulness": 0}])
    (said,) = judged(items, path, tmp_path)["warnings"]
    assert said.startswith("4 of 4 texts have no letter in English's script (latin), yet language is 'en'"), said
    assert "set language to their language, or 'auto'" in said
    written = json.loads(Path(judged(items, path, tmp_path)["result_path"]).read_text())
    assert written["warnings"] == [said]
    chinese = asyncio.run(
        run_answer_judge(
            "faithfulness", items, judge_llm=UNREACHABLE, judge_cache="", save_path=str(tmp_path / "out"),
            max_failed_fraction=0.5, prompt_file={}, language="zh", replay=path,
        )
    )  # fmt: skip
    assert chinese["warnings"] == [] and chinese["aggregate"]["faithfulness"] == 0.5
    english = build_items(["Who was Newton?", "Did they win?"], ["A physicist.", "Yes."], id_ls=["t1", "t2"])
    assert judged(english, path, tmp_path)["warnings"] == []


@pytest.mark.parametrize("digits", [400, 5001])
def test_a_value_past_every_float_is_refused_by_file_and_line(tmp_path: Path, digits: int) -> None:
    """Python reads a whole number of any size up to 4,300 digits: one of 400 digits, past every float, overflowed
    where the judge used it (OverflowError), one of 5,001 raised Python's ValueError in the reader. Both are the
    file's mistake, named by its line."""
    items = build_items(["q1", "q2"], ["a", "b"], id_ls=["t1", "t2"])
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "t1", "faithfulness": 0.5}\n{"id": "t2", "faithfulness": 1' + "0" * (digits - 1) + "}\n")
    with pytest.raises(InputError, match=rf"r.jsonl:2: a whole number of {digits:,} digits; a number may have at most"):
        judged(items, str(path), tmp_path)
    path.write_text('{"id": "t1", "faithfulness": 0.5}\n{"id": "t2", "faithfulness": 1' + "0" * 307 + "}\n")
    assert judged(items, str(path), tmp_path)["items"][1]["faithfulness"] == 1e307  # 308 digits: read, a float
