"""Each example's header says whether it needs an API key to mean anything and what it shows offline, and the
README's list of examples says the same (its "API key" column), so the two cannot drift apart."""

from __future__ import annotations

import re

from tests.conftest import ROOT

HEADER = re.compile(r"^# Needs an API key: (yes|no)\. Offline[^:]*: \S", re.M)
ROW = re.compile(r"^\| `examples/(\w+)\.yaml` \|.*\| (yes|no) \|$", re.M)


def header_says(name: str) -> str:
    head = (ROOT / "examples" / f"{name}.yaml").read_text().split("\nservers:", 1)[0].split("\nsweep:", 1)[0]
    found = HEADER.findall(head)
    assert len(found) == 1, f"examples/{name}.yaml: its header needs one '# Needs an API key: yes|no. Offline: ...'"
    return found[0]


def test_every_example_header_says_if_it_needs_a_key_and_what_it_shows_offline() -> None:
    names = sorted(p.stem for p in (ROOT / "examples").glob("*.yaml"))
    assert len(names) >= 20
    says = {name: header_says(name) for name in names}
    assert says["eval_trec"] == "no" and says["umbrela"] == "yes"
    assert says["judge_calibration"] == says["fill_qrels"] == "no"  # recorded judgments (their own tests run them)


def test_the_readme_column_matches_every_example_header() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Examples", 1)[1].split("\n\n", 2)[1]
    assert table.splitlines()[0] == "| pipeline | what it does | needs | API key, to mean anything |"
    rows = dict(ROW.findall(table))
    assert len(rows) == len(table.splitlines()) - 2, "every row of the table ends with its yes / no cell"
    assert rows == {name: header_says(name) for name in rows}
    listed = set(rows) | {"sweep_retrieval_pipeline"}  # run through examples/sweep_retrieval.yaml
    assert listed == {p.stem for p in (ROOT / "examples").glob("*.yaml")}
