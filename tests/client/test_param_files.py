"""Parameter files as text: every example's committed file is what ``ultra build`` writes (a build leaves
it byte for byte unchanged), and a rebuild that adds or drops settings keeps the user's comments."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest
import yaml

from ultra_client.commands import build
from ultra_client.pipeline.params import MergeReport, merge_settings, read_parameter_file, update_parameter_file

ROOT = Path(__file__).resolve().parents[2]


def example_parameter_files() -> list[tuple[Path, Path]]:
    """(pipeline, its committed parameter file) for every example; a sweep names both itself."""
    pairs = []
    for spec in sorted([*ROOT.glob("examples/*.yaml"), *ROOT.glob("examples/compat/*.yaml")]):
        sweep = (yaml.safe_load(spec.read_text(encoding="utf-8")) or {}).get("sweep")
        if sweep:
            if sweep.get("param"):  # else the pipeline's own file, listed with the pipeline
                pairs.append((spec.parent / sweep["pipeline"], spec.parent / sweep["param"]))
        elif (spec.parent / "parameters" / f"{spec.stem}_parameter.yaml").exists():
            pairs.append((spec, spec.parent / "parameters" / f"{spec.stem}_parameter.yaml"))
    return pairs


EXAMPLES = example_parameter_files()


def test_every_examples_parameter_file_is_listed() -> None:
    committed = {*ROOT.glob("examples/parameters/*.yaml"), *ROOT.glob("examples/compat/parameters/*.yaml")}
    assert {param for _, param in example_parameter_files()} == committed


@pytest.mark.parametrize(("pipeline", "param"), EXAMPLES, ids=[str(param.relative_to(ROOT)) for _, param in EXAMPLES])
def test_a_build_leaves_the_committed_parameter_file_unchanged(
    pipeline: Path, param: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # servers/<name> paths resolve from the project
    copy = tmp_path / pipeline.name
    shutil.copy(pipeline, copy)
    (tmp_path / "parameters").mkdir()
    target = tmp_path / "parameters" / f"{pipeline.stem}_parameter.yaml"
    shutil.copy(param, target)
    written, report = anyio.run(build, str(copy))
    assert written == target
    assert (report.added, report.dropped) == ([], []), f"{param.relative_to(ROOT)}: run `ultra build` on it"
    assert target.read_bytes() == param.read_bytes()


COMMENTED = """\
# my notes on this file
bench:
  # where the questions are
  path: mine.jsonl   # my own file
  old:
    - 1
    - 2
  # the seed below is mine
  seed: 7
custom: {}
judge:
  x: 1
"""


def _rebuild(tmp_path: Path, text: str, defaults: dict) -> tuple[str, MergeReport]:
    target = tmp_path / "p.yaml"
    target.write_text(text, encoding="utf-8")
    merged, report = merge_settings(defaults, read_parameter_file(target))
    update_parameter_file(target, "p.yaml", merged, report)
    assert read_parameter_file(target) == merged
    return target.read_text(encoding="utf-8"), report


def test_a_rebuild_adds_and_drops_settings_and_keeps_every_comment(tmp_path: Path) -> None:
    defaults = {
        "bench": {"path": "a", "seed": 42, "names": "ultrarag", "key_map": {"q_ls": "question"}},
        "custom": {},
        "gen": {"model": "m"},
    }
    text, report = _rebuild(tmp_path, COMMENTED, defaults)
    assert sorted(report.added) == ["bench.key_map", "bench.names", "gen.model"] and not report.rewritten
    assert sorted(report.dropped) == ["bench.old", "judge"]
    assert text == (
        "# my notes on this file\n"
        "bench:\n"
        "  # where the questions are\n"
        "  path: mine.jsonl   # my own file\n"
        "  # the seed below is mine\n"
        "  seed: 7\n"
        "  names: ultrarag\n"
        "  key_map:\n"
        "    q_ls: question\n"
        "custom: {}\n"
        "gen:\n"
        "  model: m\n"
    )


def test_a_rebuild_that_changes_nothing_writes_nothing(tmp_path: Path) -> None:
    defaults = {"bench": {"path": "a", "old": [], "seed": 1}, "custom": {}, "judge": {"x": 0}}
    text, report = _rebuild(tmp_path, COMMENTED, defaults)
    assert text == COMMENTED and not (report.added or report.dropped or report.rewritten)


def test_a_section_in_flow_style_that_must_change_is_written_anew_and_said_so(tmp_path: Path) -> None:
    text, report = _rebuild(tmp_path, "# mine\nbench: {path: x}\n", {"bench": {"path": "a", "seed": 1}})
    assert report.rewritten and report.added == ["bench.seed"]
    assert "# mine" not in text and yaml.safe_load(text) == {"bench": {"path": "x", "seed": 1}}
