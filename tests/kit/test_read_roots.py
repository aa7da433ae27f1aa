"""``ultra_base.errors.readable_path``: what a tool may read, and the parameters checked before it starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ultra_base.errors import InputError, add_read_root, confined_reads, existing_file, read_roots, readable_path
from ultra_kit.paths.read_arguments import check_read_arguments, read_parameters


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("ULTRA_READ_ROOTS", "ULTRA_ALLOW_OUTSIDE_READS", "ULTRA_HOME"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "project"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "in.txt").write_text("x", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s", encoding="utf-8")
    monkeypatch.chdir(folder)
    return folder


def test_outside_a_tool_call_anything_is_read(project: Path) -> None:
    outside = project.parent / "outside" / "secret.txt"
    assert existing_file(outside) == outside  # the libraries called directly read what they are given


def test_inside_a_tool_call_only_the_read_roots(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = project.parent / "outside" / "secret.txt"
    with confined_reads():
        assert readable_path("data/in.txt", setting="x") == Path("data/in.txt")
        assert readable_path("output/later.json", setting="x") == Path("output/later.json")
        with pytest.raises(InputError, match=f"run_path resolves to {outside}, outside .*ULTRA_READ_ROOTS=") as caught:
            readable_path(str(outside), setting="run_path")
        assert "ULTRA_ALLOW_OUTSIDE_READS=1" in str(caught.value)
        with pytest.raises(InputError, match="queries file resolves to"):
            existing_file(project / "data" / ".." / ".." / "outside" / "secret.txt", what="queries file")
        monkeypatch.setenv("ULTRA_READ_ROOTS", os.pathsep.join(["", str(outside.parent)]))
        assert readable_path(str(outside), setting="x") == outside
        monkeypatch.delenv("ULTRA_READ_ROOTS")
        monkeypatch.setenv("ULTRA_ALLOW_OUTSIDE_READS", "1")
        assert readable_path(str(outside), setting="x") == outside


def test_a_link_out_of_the_project_is_refused(project: Path) -> None:
    (project / "data" / "link.txt").symlink_to(project.parent / "outside" / "secret.txt")
    (project / "data" / "dir_link").symlink_to(project.parent / "outside")
    with confined_reads():
        for path in ("data/link.txt", "data/dir_link/secret.txt", "data/dir_link"):
            with pytest.raises(InputError, match="outside the folders tools may read"):
                readable_path(path, setting="x")


def test_roots_are_ultra_home_not_the_home_folder_or_slash(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert read_roots() == [project.resolve(), (project / "output").resolve()]
    monkeypatch.setenv("HOME", str(project))
    assert read_roots() == [(project / "output").resolve()]  # a server started in the home folder
    monkeypatch.chdir("/")
    assert read_roots() == [Path("/output")]
    monkeypatch.setenv("ULTRA_HOME", str(project))
    assert read_roots() == [project.resolve(), Path("/output")]
    add_read_root(project.parent / "outside")
    assert read_roots()[-1] == (project.parent / "outside").resolve()


def test_input_path_parameters_are_found_by_name_less_where_results_go() -> None:
    settings = {"benchmark": {"path": "data/x.jsonl", "limit": 3}, "judge_llm": {"model_id": "m"}, "run_path": "r"}
    settings |= {"save_path": "output/x", "index_path": "output/index", "dataset_dir": "output/synth", "ks": [1]}
    names = [*settings, "out_dir", "result_paths", "template_dirs", "consistency_files", "q_ls"]
    assert read_parameters(names, settings) == {
        "benchmark": "path",
        "run_path": None,
        "result_paths": None,
        "template_dirs": None,
        "consistency_files": None,
    }


def test_arguments_are_checked_before_the_tool_starts(project: Path) -> None:
    outside = str(project.parent / "outside" / "secret.txt")
    parameters = {"benchmark": "path", "run_paths": None}
    with confined_reads():
        check_read_arguments({"benchmark": {"path": "data/in.txt"}, "run_paths": ["data/in.txt", ""]}, parameters)
        with pytest.raises(InputError, match="^benchmark.path resolves to"):
            check_read_arguments({"benchmark": {"path": outside}}, parameters)
        with pytest.raises(InputError, match="^run_paths resolves to"):
            check_read_arguments({"run_paths": ["data/in.txt", outside]}, parameters)
