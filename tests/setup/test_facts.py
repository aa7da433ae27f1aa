"""docs/facts.json and the docs that quote it (bench/setup_facts.py): the quotes agree, a changed figure
is caught in each file that quotes it, and the measurements read what they should. The whole suite is
not run here (``--suite`` does that by hand)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import setup_facts  # noqa: E402

FACTS = json.loads((ROOT / "docs" / "facts.json").read_text(encoding="utf-8"))


def test_every_quoted_figure_agrees_with_facts_json() -> None:
    done = subprocess.run([sys.executable, "bench/setup_facts.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "facts: in line"


def test_a_changed_figure_is_found_stale_where_it_is_quoted() -> None:
    problems = setup_facts.stale({**FACTS, "packages_gb": 9.9, "suite_minutes": [7, 7], "risk_suite_minutes": 4})
    files = sorted({problem.split(":")[0] for problem in problems})
    assert files == [
        "README.md",
        "docs/extending.md",
        "docs/risk.md",
        "examples/parameters/risk_suite_parameter.yaml",
        "examples/risk_suite.yaml",
    ]
    quoted = f"The packages take about {FACTS['packages_gb']} GB of disk"
    assert f"README.md: '{quoted}' -> 'The packages take about 9.9 GB of disk'" in problems
    assert [p for p in problems if p.startswith("docs/extending.md")][0].endswith(
        "-> 'the whole suite (about 7 minutes on 2 cores)'"
    )


def test_the_suite_figures_come_from_pytests_closing_line() -> None:
    log = "....\nFAILED tests/x.py::t\n1768 passed, 9 skipped, 2 failed, 3 warnings in 734.12s (0:12:14)\n"
    facts = setup_facts.suite_from_log(log, "a log")
    assert facts["tests"] == 1768 + 9 + 2
    assert facts["suite_minutes"] == [12, 12]


def test_the_package_closure_follows_requirements() -> None:
    closure = setup_facts._closure(["pytest>=8"])
    assert {"pytest", "pluggy", "iniconfig", "packaging"} <= closure
    assert "numpy" not in closure
    assert setup_facts._size("pluggy") > 10_000


def test_the_phrases_read_a_range_or_one_figure() -> None:
    assert setup_facts.phrases({**FACTS, "suite_minutes": [12, 21]})["suite_phrase"] == "12 to 21 minutes on 2 cores"
    assert setup_facts.phrases({**FACTS, "suite_minutes": [9, 9]})["suite_phrase"] == "about 9 minutes on 2 cores"


def test_write_puts_new_figures_where_they_are_quoted_and_leaves_the_rest(tmp_path, monkeypatch) -> None:
    for file in {file for file, _, _ in setup_facts.QUOTES}:
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_text((ROOT / file).read_text("utf-8"), encoding="utf-8")
    monkeypatch.setattr(setup_facts, "ROOT", tmp_path)
    changed = {**FACTS, "tests": 1815, "suite_minutes": [15, 15]}
    setup_facts.write(changed)
    assert setup_facts.stale(changed) == []
    readme, before = (tmp_path / "README.md").read_text("utf-8"), (ROOT / "README.md").read_text("utf-8")
    assert "about 1,820 tests in about 15 minutes on 2 cores" in readme
    # the packages' figures did not change: their quote keeps its line breaks
    assert readme.count("\n") == before.count("\n")
    assert "the whole suite (about 15 minutes on 2 cores)" in (tmp_path / "docs" / "extending.md").read_text("utf-8")
