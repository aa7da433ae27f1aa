"""The docs' measure list is generated from the registry, and the public API needs no MCP or pydantic."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ultra_trec.measures import FAMILIES, registry_markdown

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"<!-- generated: registry measures -->\n(.*?)<!-- end generated -->", re.DOTALL)


def test_metrics_doc_lists_every_family_as_the_registry_says() -> None:
    (body,) = BLOCK.findall((ROOT / "docs" / "metrics.md").read_text())
    assert body == registry_markdown(), "stale: run `python -m ultra_client.cards` to regenerate docs/metrics.md"


def test_every_family_is_defined_once_in_the_docs_with_its_citation() -> None:
    """A family's one description (what it is, with its formula) is its Definitions line, beside its citation;
    the table above says how it is written, not what it is again."""
    doc = registry_markdown()
    table, definitions = doc.split("\n\n", 1)
    for family in FAMILIES.values():
        assert family.description and family.citation, family.name
        line = next(line for line in definitions.splitlines() if line.startswith(f"- `{family.name}`"))
        assert line.endswith(f": {family.description}. Source: {family.citation}."), family.name
        assert family.description not in table, family.name
    assert not hasattr(FAMILIES["map"], "definition")


def test_public_api_imports_neither_mcp_nor_pydantic() -> None:
    data = ROOT / "tests" / "data" / "trec_eval"
    code = f"""
import sys
from ultra_trec import compare, evaluate
result = evaluate({str(data / "qrels.test")!r}, {str(data / "results.test")!r}, ["map", "P@10", "ndcg.1=3"])
assert round(result.aggregate["map"], 4) == 0.1785 and round(result.aggregate["P@10"], 4) == 0.3
table = compare({str(data / "qrels.test")!r}, [{str(data / "results.trunc")!r}], {str(data / "results.test")!r},
                ["map"], ks=None, relevance_level=1, n_resamples=100, seed=1, alpha=0.05, correction="holm")
assert table.rows[0]["metric"] == "map" and table.rows[0]["diff"] < 0
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "pydantic", "servers", "ultra_client"))
assert not loaded, loaded
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
