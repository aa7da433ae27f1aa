"""Text not written in the script of ``language`` is warned about once per run, naming the setting."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import ROOT, run_ultra
from tests.support.background import Command, Finished, in_background
from ultra_kit.languages import script_warning

PIPELINE = """\
servers:
  benchmark: servers/benchmark
  evaluation: servers/evaluation
pipeline:
  - benchmark.get_data
  - loop:
      times: 2
      steps:
        - evaluation.evaluate
"""


def chinese_project(tmp_path: Path, language: str) -> Path:
    """A project scoring XQuAD's Chinese items (data/multilingual) with ``language``."""
    rows = [json.loads(line) for line in (ROOT / "data/multilingual/xquad_slice.jsonl").read_text("utf-8").splitlines()]
    project = tmp_path / language
    (project / "parameters").mkdir(parents=True)
    lines = [json.dumps(row, ensure_ascii=False) for row in rows if row["language"] == "zh"]
    (project / "zh.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (project / "p.yaml").write_text(PIPELINE, encoding="utf-8")
    key_map = {"q_ls": "question", "gt_ls": "golden_answers", "pred_ls": "pred_answer", "id_ls": "id"}
    params = {"benchmark": {"benchmark": {"path": "zh.jsonl", "key_map": key_map}},
              "evaluation": {"metrics": ["em", "f1"], "language": language}}  # fmt: skip
    (project / "parameters" / "p_parameter.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    return project


def english_run(folder: Path) -> Command:
    """The Chinese items scored as English: a background run (its language detector takes seconds to build)."""
    return Command(("run", "p.yaml"), timeout=120, cwd=chinese_project(folder, "en"))


@in_background(english_run)
def test_chinese_answers_under_english_are_warned_about_once_per_run(tmp_path: Path, background_run: Finished) -> None:
    english = background_run.done
    assert english.returncode == 0, english.stderr
    warnings = [line for line in english.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 1, english.stderr  # the loop ran evaluate twice: one warning
    assert "evaluation.evaluate:" in warnings[0] and "English's script (latin)" in warnings[0]
    assert "language is 'en'" in warnings[0] and "set language to their language" in warnings[0]
    chinese = run_ultra("run", "p.yaml", cwd=chinese_project(tmp_path, "zh"))
    assert chinese.returncode == 0, chinese.stderr
    assert "warning:" not in chinese.stderr


def test_the_warning_counts_only_texts_with_letters_and_needs_a_majority() -> None:
    assert script_warning(["308", "39", "1950"], "en") is None  # no letters: nothing to say
    assert script_warning(["牛顿", "Newton", "Paris"], "en") is None  # one of three
    said = script_warning(["牛顿", "黑豹队", "Newton", "2015"], "en")
    assert said is not None and said.startswith("2 of 3 texts have no letter in English's script")
    assert script_warning(["牛顿", "黑豹队"], "zh") is None and script_warning(["牛顿"], "auto") is None
    assert script_warning(["Newton", "Paris"], "zh") == (
        "2 of 2 texts have no letter in Chinese's script (cjk), yet language is 'zh': they are scored by its "
        "rules; set language to their language, or 'auto'"
    )
