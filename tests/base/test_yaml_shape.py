"""``ultra_base.file_limits.check_shape`` walks a YAML document's events with libyaml, and again with PyYAML's own
parser when libyaml cannot parse it: the limits hold either way, and a syntax error is PyYAML's, as the loader
that follows would give it."""

from __future__ import annotations

import pytest
import yaml

from ultra_base.file_limits import MAX_DEPTH, ShapeError, _walk, check_shape

pytestmark = pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")

DEEP = "a:\n" + "".join("  " * n + f"k{n}:\n" for n in range(1, MAX_DEPTH + 2)) + "  " * (MAX_DEPTH + 2) + "v\n"


@pytest.mark.parametrize("loader", ["CSafeLoader", "SafeLoader"])
def test_both_parsers_find_the_same_excess_at_the_same_line(loader: str) -> None:
    with pytest.raises(ShapeError) as deep:
        _walk(DEEP, getattr(yaml, loader))
    assert deep.value.line == MAX_DEPTH + 1 and deep.value.problem == f"nested more than {MAX_DEPTH} levels deep"
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [" + ", ".join([f"*{chr(97 + n)}"] * 10) + "]\n" for n in range(6)
    )
    with pytest.raises(ShapeError) as expands:
        _walk(bomb, getattr(yaml, loader))
    assert expands.value.line == 5 and "aliases expand to more than" in expands.value.problem


def test_a_syntax_error_is_pyyamls() -> None:
    """libyaml words it "did not find expected ',' or ']'"; the loader after the check says PyYAML's words."""
    with pytest.raises(yaml.YAMLError) as broken:
        check_shape("a: [1, 2\nb: 3\n")
    with pytest.raises(yaml.YAMLError) as loaded:
        yaml.load("a: [1, 2\nb: 3\n", Loader=yaml.SafeLoader)  # noqa: S506 - the safe loader
    assert str(broken.value) == str(loaded.value) and "did not find" not in str(broken.value)


def test_a_lone_surrogate_is_a_yaml_error_not_a_crash() -> None:
    """A command-line value may hold one (an undecodable byte); libyaml cannot encode it."""
    with pytest.raises(yaml.YAMLError, match="unacceptable character #xdc80"):
        check_shape("x: \udc80\n")


def test_a_valid_document_passes() -> None:
    check_shape("a: &a [1, 2, 3]\nb: [*a, *a]\nc: {d: [e, {f: g}]}\n")


def test_libyaml_loads_the_projects_files_as_pyyaml_does() -> None:
    """Every parameter, pipeline and example file of the project: the same values either way (the loader is
    libyaml's once its parser has read the document)."""
    from pathlib import Path

    from ultra_base.file_limits import load_limited_yaml

    root = Path(__file__).resolve().parents[2]
    paths = [*root.glob("servers/*/parameter.yaml"), *root.glob("examples/**/*.yaml")]
    assert len(paths) > 30
    for path in paths:
        expected = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)  # noqa: S506 - safe
        assert load_limited_yaml(path) == expected, path
