"""One reader of a rubric's scale (``ultra_kit.labels.rubric_scales.read_rubric_scale``) for its two readers: the
judge's ``rubric_judge`` (a rubrics file) and ``ultra annotate --scale RUBRIC.yaml``. The same file gives the same
scores and values on both sides, and the same bad scale the same message at the same file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from servers.judge.rubrics.sources import rubrics_file
from ultra_base.errors import InputError
from ultra_client.annotate.scales import read_scale
from ultra_kit.labels.rubric_scales import RubricScale, ScaleError, read_rubric_scale

HEAD = "- name: verdict\n  criteria: Is the answer right?\n  inputs: [answer]\n  scale:"
TIED = "scale labels 'pass' and 'fail' are both worth 1: each label needs its own value"
BAD = [  # (the scale as written after "scale:", its line, the message)
    ("\n    pass: 1\n    partly: 0.5\n    fail: 1\n", 7, TIED),
    (" [3, 3]\n", 4, "scale [3, 3] has one value: a scale needs two values or more, low first"),
    (" [5, 1]\n", 4, "scale [5, 1] has low > high"),
    (" [1, 30]\n", 4, "scale [1, 30] has more than 21 values"),
    (" [1, 2, 3]\n", 4, "scale [low, high] takes two whole numbers, got [1, 2, 3]"),
    (" [true, 3]\n", 4, "scale [low, high] takes two whole numbers, got [True, 3]"),
    (" {pass: true, fail: 0}\n", 4, "scale label 'pass' must be a non-empty label with a finite number, got True"),
    (" {pass: .nan, fail: 0}\n", 4, "scale label 'pass' must be a non-empty label with a finite number, got nan"),
    (" {Pass: 1, pass: 0}\n", 4, "scale label 'pass' is given twice"),
    (" {pass: 1}\n", 4, "the scale has one value: give two labels or more ({pass: 1, fail: 0})"),
    (" one to five\n", 4, "scale must be [low, high] (whole numbers) or labels with values {pass: 1, fail: 0}"),
]  # fmt: skip


def judge_error(path: Path) -> str:
    with pytest.raises(InputError) as refused:
        rubrics_file(str(path))
    return str(refused.value)


def annotate_error(path: Path) -> str:
    with pytest.raises(InputError) as refused:
        read_scale(str(path))
    return str(refused.value)


@pytest.mark.parametrize(("scale", "line", "message"), BAD, ids=[b[2][:40] for b in BAD])
def test_a_bad_scale_gets_the_same_message_at_the_same_line_on_both_sides(tmp_path, scale, line, message) -> None:
    path = tmp_path / "verdict.yaml"
    path.write_text(HEAD + scale, encoding="utf-8")
    judge, annotate = judge_error(path), annotate_error(path)
    assert judge.startswith(f"{path}:{line}: rubric 1 ('verdict'): {message}"), judge
    assert annotate == judge.replace("rubric 1 ('verdict'): ", "", 1)


@pytest.mark.parametrize(("scale", "values"), [
    (" [1, 5]", {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0, 5: 5.0}),
    (" {pass: 1, Partly right: 0.5, fail: 0}", {"pass": 1.0, "partly_right": 0.5, "fail": 0.0}),
])  # fmt: skip
def test_a_good_scale_gives_the_same_scores_and_values_on_both_sides(tmp_path, scale, values) -> None:
    path = tmp_path / "verdict.yaml"
    path.write_text(HEAD + scale + "\n", encoding="utf-8")
    (rubric,) = rubrics_file(str(path))
    assert rubric.scale.values == values
    options = read_scale(str(path)).options  # lowest value first, each on its key 0-9
    assert {option.label: option.value for option in options} == {str(k): v for k, v in values.items()}
    assert [option.value for option in options] == sorted(values.values())


def test_the_reader_itself() -> None:
    assert read_rubric_scale([0, 2]) == RubricScale({0: 0.0, 1: 1.0, 2: 2.0}, labelled=False)
    with pytest.raises(ScaleError) as refused:
        read_rubric_scale({"yes": 1, "no": 0, "maybe": 1})
    assert refused.value.label == "maybe" and str(refused.value).startswith("scale labels 'yes' and 'maybe'")


def test_annotate_keeps_its_page_limit_of_ten_options(tmp_path: Path) -> None:
    path = tmp_path / "verdict.yaml"
    path.write_text(HEAD + " [0, 15]\n", encoding="utf-8")
    assert rubrics_file(str(path))[0].scale.scores == list(range(16))  # a judge may use 16 values ...
    assert annotate_error(path) == f"{path}:4: the scale has 16 values; the page labels 2 to 10 (keys 0-9)"
