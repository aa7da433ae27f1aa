"""Rubric declarations: read from a YAML file with lines, every mistake refused at file:line, at ultra build too."""

from __future__ import annotations

from pathlib import Path

import pytest

from servers.judge.rubrics.declaration import read_rubrics
from servers.judge.rubrics.sources import declared_rubrics, rubrics_file
from tests.conftest import ROOT, run_ultra
from tests.support.together import at_once
from ultra_base.errors import InputError

GOOD = """\
- name: polite
  criteria: Is the answer polite?
  scale: [1, 5]
  inputs: [question, answer]
- name: grounded
  criteria: Does the answer rest on the passages?
  steps: [Find the claims., Check each.]
  scale: {Pass: 1, Partly right: 0.5, fail: 0}
  inputs: [passages, answer]
  examples:
    - {answer: Paris., passages: [Paris is the capital.], score: pass, reasoning: Stated.}
"""


def test_a_good_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "rubrics.yaml"
    path.write_text(GOOD, encoding="utf-8")
    polite, grounded = rubrics_file(str(path))
    assert polite.scale.scores == [1, 2, 3, 4, 5] and not polite.scale.labelled and polite.steps is None
    assert grounded.scale.values == {"pass": 1.0, "partly_right": 0.5, "fail": 0.0}  # as the reply reader reads labels
    assert grounded.inputs == ("answer", "passages")  # the order the judge shows them in
    assert grounded.examples[0]["score"] == "pass" and grounded.steps == ("Find the claims.", "Check each.")
    wrapped = tmp_path / "wrapped.yaml"
    wrapped.write_text("rubrics:\n" + "".join(f"  {line}\n" for line in GOOD.splitlines()), encoding="utf-8")
    assert [r.text for r in rubrics_file(str(wrapped))] == [polite.text, grounded.text]


BASE = "- name: other\n  criteria: Fine.\n  scale: [0, 1]\n  inputs: [answer]\n"
POLITE = {"name": "polite", "criteria": "Is it polite?", "scale": "[1, 5]", "inputs": "[question]"}
BAD = [  # (key, value, message): the second declaration (lines 5-8) gets that key's value
    ("inputs", "[question, context]", "rubric 2 ('polite'): unknown input 'context'"),
    ("scale", "[3, 3]", "rubric 2 ('polite'): scale [3, 3] has one value"),
    ("scale", "{pass: 1}", "rubric 2 ('polite'): the scale has one value"),
    ("criteria", "'  '", "rubric 2 ('polite'): criteria is empty"),
    ("critera", "typo", "rubric 2 ('polite'): unknown key 'critera' (did you mean 'criteria'?)"),
    ("scale", "[1, 30]", "scale [1, 30] has more than 21 values"),
    ("name", "num_items", "name must be letters, digits and _"),
]


@pytest.mark.parametrize(("key", "value", "message"), BAD, ids=[b[2][:30] for b in BAD])
def test_a_bad_declaration_is_refused_at_its_line(tmp_path: Path, key: str, value: str, message: str) -> None:
    fields = {**POLITE, key: value} if key != "critera" else {**POLITE, "critera": value}
    text = BASE + "".join(("- " if i == 0 else "  ") + f"{k}: {v}\n" for i, (k, v) in enumerate(fields.items()))
    line = 5 + list(fields).index(key)
    path = tmp_path / "rubrics.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        rubrics_file(str(path))
    assert str(caught.value).startswith(f"{path}:{line}: "), (text, str(caught.value))
    assert message in str(caught.value)


def test_examples_twice_named_and_both_sources(tmp_path: Path) -> None:
    one = {"name": "a", "criteria": "c", "scale": [0, 1], "inputs": ["answer"]}
    with pytest.raises(InputError, match=r"rubrics\[1\]: rubric 2 \('a'\): the name 'a' is declared twice"):
        read_rubrics([one, one], path=None)
    with pytest.raises(InputError, match=r"example 1: score 7 is not on the scale \[0, 1\]"):
        read_rubrics([{**one, "examples": [{"answer": "x", "score": 7}]}], path=None)
    with pytest.raises(InputError, match=r"example 1 misses \['answer'\]"):
        read_rubrics([{**one, "examples": [{"score": 1}]}], path=None)
    with pytest.raises(InputError, match="not both"):
        declared_rubrics([one], "x.yaml")
    with pytest.raises(InputError, match="no rubric"):
        declared_rubrics([], "")


def pipeline_with_params(tmp_path: Path, judge_section: str) -> tuple[Path, Path]:
    pipeline = tmp_path / "rubric.yaml"
    pipeline.write_text("servers:\n  judge: servers/judge\npipeline:\n  - judge.rubric_judge\n", encoding="utf-8")
    params = tmp_path / "parameters" / "rubric_parameter.yaml"
    params.parent.mkdir()
    params.write_text("judge:\n" + judge_section, encoding="utf-8")
    return pipeline, params


def test_ultra_build_refuses_a_bad_rubric_naming_file_and_line(tmp_path: Path) -> None:
    """Three builds, each of a project of its own (the one that passes rewrites its parameter file), at once."""
    inline, one_value, good = tmp_path / "inline", tmp_path / "one_value", tmp_path / "good"
    for folder in (inline, one_value, good):
        folder.mkdir()
    projects = {inline: pipeline_with_params(
        inline,
        "  rubrics:\n"
        "    - name: polite\n"
        "      criteria: Is it polite?\n"
        "      scale: [1, 5]\n"
        "      inputs: [question, context]\n",
    )}  # fmt: skip
    for folder, text in ((one_value, GOOD.replace("scale: [1, 5]", "scale: [5, 5]")), (good, GOOD)):
        (folder / "rubrics.yaml").write_text(text, encoding="utf-8")
        projects[folder] = pipeline_with_params(folder, "")
        projects[folder][1].write_text(f"judge:\n  rubrics_path: {folder / 'rubrics.yaml'}\n", encoding="utf-8")
    ran = at_once({folder: lambda folder=folder: run_ultra("build", str(projects[folder][0]), cwd=ROOT)
                   for folder in projects})  # fmt: skip

    built, params = ran[inline], projects[inline][1]
    assert built.returncode == 1, built.stderr
    assert f"judge.rubrics: {params}:6: rubric 1 ('polite'): unknown input 'context'" in built.stderr

    built, rubrics = ran[one_value], one_value / "rubrics.yaml"
    assert built.returncode == 1
    assert f"judge.rubrics_path: {rubrics}:3: rubric 1 ('polite'): scale [5, 5] has one value" in built.stderr

    built, rubrics, params = ran[good], good / "rubrics.yaml", projects[good][1]
    assert built.returncode == 0, built.stderr
    assert f"rubrics_path: {rubrics}" in params.read_text(encoding="utf-8")


TIED = """\
- name: verdict
  criteria: Is the answer right?
  scale:
    pass: 1
    partly: 0.5
    fail: 1
  inputs: [answer]
"""
TIED_MESSAGE = "rubric 1 ('verdict'): scale labels 'pass' and 'fail' are both worth 1: each label needs its own value"


def test_two_labels_worth_the_same_are_refused_from_a_file_a_setting_and_at_build(tmp_path: Path) -> None:
    rubrics = tmp_path / "rubrics.yaml"
    rubrics.write_text(TIED, encoding="utf-8")
    env = {"OPENAI_API_KEY": "sk-not-used"}  # refused before any request
    inline = "rubrics=[{name: verdict, criteria: Is the answer right, scale: {pass: 1, fail: 1.0}, inputs: [answer]}]"
    section = "  rubrics:\n" + "".join(f"    {line}\n" for line in TIED.splitlines())
    pipeline, params = pipeline_with_params(tmp_path, section)
    ran = at_once({  # the two calls and the build only read their files: at once
        "file": lambda: run_ultra("call", "judge.rubric_judge", f"rubrics_path={rubrics}", 'pred_ls=["Paris."]',
                                  cwd=ROOT, env=env),
        "inline": lambda: run_ultra("call", "judge.rubric_judge", inline, 'pred_ls=["Paris."]', cwd=ROOT, env=env),
        "build": lambda: run_ultra("build", str(pipeline), cwd=ROOT),
    })  # fmt: skip
    called = ran["file"]
    assert called.returncode != 0 and f"{rubrics}:6: {TIED_MESSAGE}" in called.stderr  # the line of 'fail'
    assert "merge them into one label" in called.stderr and "Traceback" not in called.stderr
    called = ran["inline"]
    assert called.returncode != 0 and f"rubrics[0]: {TIED_MESSAGE}" in called.stderr
    built = ran["build"]
    assert built.returncode == 1 and f"judge.rubrics: {params}:8: {TIED_MESSAGE}" in built.stderr
    rubrics.write_text(TIED.replace("fail: 1", "fail: 0"), encoding="utf-8")
    assert rubrics_file(str(rubrics))[0].scale.values == {"pass": 1.0, "partly": 0.5, "fail": 0.0}
