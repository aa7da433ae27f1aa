"""Whole numbers Python reads at any size (up to 4,300 digits, then its own ValueError), but nothing downstream takes:
past every float (309 digits and more) in a YAML or JSON file, or past the 64-bit integers a result file holds in a
tool's argument. Each is refused by name, file and line where there is one; before, a pipeline's parameter file of
5,000 digits ended in Python's traceback, and 30 or 400 digits crashed the tool when it wrote its result."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra
from tests.support.together import at_once
from ultra_base.errors import InputError
from ultra_base.file_limits import load_limited_yaml
from ultra_kit.readers import read_json

PARAMETERS = (ROOT / "examples" / "parameters" / "eval_trec_parameter.yaml").read_text(encoding="utf-8")
LINE = PARAMETERS.splitlines().index("  relevance_level: 1") + 1


def with_level(tmp_path: Path, level: str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(PARAMETERS.replace("  relevance_level: 1\n", f"  relevance_level: {level}\n"), encoding="utf-8")
    return path


@pytest.mark.parametrize("digits", [309, 5000])
def test_a_parameter_file_with_a_number_past_every_float_is_refused_at_its_line(tmp_path: Path, digits: int) -> None:
    params = with_level(tmp_path, "1" + "0" * (digits - 1))
    done = run_ultra("run", str(ROOT / "examples" / "eval_trec.yaml"), "--param", str(params), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert f"params.yaml:{LINE}: a whole number of {digits:,} digits; a number may have at most 308" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "output").exists()


def test_the_limit_is_digits_not_text(tmp_path: Path) -> None:
    """308 digits load as the number; underscores (YAML 1.1's) and a sign are not digits; a quoted one is text."""

    def loaded(text: str) -> object:
        path = tmp_path / "v.yaml"
        path.write_text(text, encoding="utf-8")
        return load_limited_yaml(path)

    assert loaded("a: " + "9" * 308) == {"a": int("9" * 308)}
    assert loaded("a: -" + "1_" * 154) == {"a": -int("1" * 154)}
    assert loaded("a: '" + "1" * 400 + "'") == {"a": "1" * 400}
    with pytest.raises(InputError, match=r"v.yaml:2: a whole number of 309 digits"):
        loaded("b: 1\na: +" + "1" * 309)


def test_a_json_file_names_the_line_of_the_long_number(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"a": 1,\n "note": "' + "2" * 400 + '",\n "b": ' + "3" * 309 + "}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"r.json:3: a whole number of 309 digits"):
        read_json(path)  # the digits inside the string on line 2 are text, not a number
    path.write_text('{"a": ' + "3" * 308 + "}", encoding="utf-8")
    assert read_json(path) == {"a": int("3" * 308)}


@pytest.mark.parametrize("stdio", [False, True], ids=["in-process", "stdio"])
def test_a_tool_argument_past_64_bits_is_refused_by_name(tmp_path: Path, stdio: bool) -> None:
    flags = ["--stdio"] if stdio else []
    trec = ROOT / "data" / "trec"
    given = ["evaluation.evaluate_trec", f"run_path={trec}/results.test", f"qrels_path={trec}/qrels.test"]
    for folder in ("a", "b", "c"):
        (tmp_path / folder).mkdir()
    ran = at_once({
        "level": lambda: run_ultra("call", *flags, *given, "relevance_level=" + "1" + "0" * 29, cwd=tmp_path / "a"),
        "ks": lambda: run_ultra("call", *flags, *given, f"ks=[5, {2**64}]", cwd=tmp_path / "b"),
        "edge": lambda: run_ultra("call", *flags, *given, f"relevance_level={2**63 - 1}", cwd=tmp_path / "c"),
    })  # fmt: skip
    for name, digits, start in (("level", 30, "100000000000"), ("ks", 20, "184467440737")):
        done = ran[name]
        assert done.returncode == 1, done.stderr
        assert (f"argument '{'relevance_level' if name == 'level' else 'ks'}': a whole number of {digits} digits "
                f"({start}...) is past the range a result file holds") in done.stderr  # fmt: skip
        assert "unexpected error" not in done.stderr and "Traceback" not in done.stderr
    assert ran["edge"].returncode == 0, ran["edge"].stderr  # the largest signed 64-bit number is written
