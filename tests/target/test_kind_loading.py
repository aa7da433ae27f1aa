"""Targets written as code are imported only from the read roots (servers/target/kinds/loading.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servers.target.kinds.loading import load_attribute
from ultra_kit.errors import InputError


def _package(root: Path, name: str, body: str) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("", encoding="utf-8")
    (root / name / "entry.py").write_text(body, encoding="utf-8")


def test_a_module_in_a_read_root_is_imported_and_its_attribute_returned(tmp_path: Path) -> None:
    _package(tmp_path, "loadpkg_one", "ANSWER = 41 + 1\nclass Box:\n    inner = 'deep'\n")
    assert load_attribute("loadpkg_one.entry:ANSWER", setting="target.function", read_roots=[tmp_path]) == 42
    assert load_attribute("loadpkg_one.entry:Box.inner", setting="target.function", read_roots=[tmp_path]) == "deep"


def test_a_file_path_in_a_read_root_is_imported(tmp_path: Path) -> None:
    (tmp_path / "helper_sibling.py").write_text("WORD = 'sib'\n", encoding="utf-8")
    source = "from helper_sibling import WORD\ndef answer(q):\n    return WORD + q\n"
    (tmp_path / "rag.py").write_text(source, encoding="utf-8")
    function = load_attribute(f"{tmp_path / 'rag.py'}:answer", setting="target.function", read_roots=[tmp_path])
    assert function("!") == "sib!"


def test_an_installed_module_is_refused_even_when_importable(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"target.runnable: module 'json' is not in a folder tools may read"):
        load_attribute("json:loads", setting="target.runnable", read_roots=[tmp_path])


def test_a_same_named_folder_does_not_let_an_installed_module_through(tmp_path: Path) -> None:
    (tmp_path / "os").mkdir()  # a folder named like the standard library's os: the import still gives the real os
    with pytest.raises(InputError, match="not in a folder tools may read"):
        load_attribute("os:system", setting="target.function", read_roots=[tmp_path])


def test_a_file_outside_the_read_roots_is_refused_before_it_runs(tmp_path: Path) -> None:
    outside, inside = tmp_path / "outside", tmp_path / "inside"
    outside.mkdir()
    inside.mkdir()
    marker = tmp_path / "ran"
    (outside / "evil.py").write_text(f"open({str(marker)!r}, 'w').close()\nf = 1\n", encoding="utf-8")
    with pytest.raises(InputError, match="not in a folder tools may read"):
        load_attribute(f"{outside / 'evil.py'}:f", setting="target.function", read_roots=[inside])
    assert not marker.exists()


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no_colon", "must be 'module:attribute'"),
        ("a:b:c", "must be 'module:attribute'"),
        (None, "must be 'module:attribute'"),
        ("loadpkg_two.entry:missing", "has no attribute 'missing'"),
        ("loadpkg_two.broken:x", "importing 'loadpkg_two.broken' failed: ZeroDivisionError"),
    ],
)
def test_bad_references_are_input_errors_naming_the_setting(tmp_path: Path, reference: object, message: str) -> None:
    if not (tmp_path / "loadpkg_two").exists():
        _package(tmp_path, "loadpkg_two", "x = 1\n")
        (tmp_path / "loadpkg_two" / "broken.py").write_text("x = 1 / 0\n", encoding="utf-8")
    with pytest.raises(InputError, match=message) as error:
        load_attribute(reference, setting="target.engine", read_roots=[tmp_path])
    assert "target.engine" in str(error.value)
