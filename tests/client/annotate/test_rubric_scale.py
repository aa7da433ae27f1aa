"""``ultra annotate --scale RUBRIC.yaml``: the rubric's scale is the page's; a scale it cannot store is refused."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_ultra

TIED = "- name: verdict\n  criteria: Is the answer right?\n  scale:\n    pass: 1\n    fail: 1\n  inputs: [answer]\n"


def test_annotate_refuses_a_rubric_scale_with_two_labels_worth_the_same(tmp_path: Path) -> None:
    rubric, items = tmp_path / "verdict.yaml", tmp_path / "items.jsonl"
    rubric.write_text(TIED, encoding="utf-8")
    items.write_text('{"id": "1", "question": "Capital of France?", "answer": "Paris."}\n', encoding="utf-8")
    done = run_ultra("annotate", str(items), "--scale", str(rubric), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{rubric}:5: scale labels 'pass' and 'fail' are both worth 1" in done.stderr  # the line of 'fail'
