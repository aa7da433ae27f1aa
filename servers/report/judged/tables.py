"""Judged numbers with their uncertainty on the page: ``ppi`` (the PPI++ interval of each system's human-scale
mean next to classical PPI, the judge-only and the human-only ones, and the paired differences),
``compare_judged`` (the paired test with and without the judge's noise, and the "significant only if the
judge is taken as exact" flag) and ``fill_qrels`` (what filling the qrels' holes changed).

Each file is read as written; its tables show every cell as the tool's JSON holds it (``cells.number``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from servers.report.cells import number
from servers.report.model import Found
from ultra_base.errors import InputError

ESTIMATES = (  # (key in a ppi row, how the page names it): the intervals drawn per system
    ("", "PPI++"),
    ("classical", "classical PPI"),
    ("judge_only", "judge only"),
    ("human_only", "human only"),
)


def _reader(tool: str, key: str, shape: type) -> Callable[[Any, str], Found]:
    """A reader of ``tool``'s result file: ``key`` must hold a ``shape``; the page shows the whole document."""

    def read(document: dict[str, Any], path: str) -> Found:
        if not isinstance(document.get(key), shape):
            raise InputError(f"{tool}: '{key}' must be a {shape.__name__}", path=path)
        found = Found(tool)
        found.judged = {"tool": tool, "path": path, "document": document}
        return found

    return read


read_ppi = _reader("ppi", "ppi_res", dict)
read_compare_judged = _reader("compare_judged", "comparisons", dict)
read_fill_qrels = _reader("fill_qrels", "per_run", dict)


def interval(estimate: dict[str, Any] | None) -> str:
    """ "[low, high]" of an estimate's ``ci`` (empty without one)."""
    ci = (estimate or {}).get("ci")
    return f"[{number(ci[0])}, {number(ci[1])}]" if isinstance(ci, list) and len(ci) == 2 else ""


def _ppi_view(document: dict[str, Any]) -> dict[str, Any]:
    systems = []
    for system, row in document["ppi_res"].items():
        cells = [system, number(row.get("n_human")), number(row.get("n_unlabelled"))]
        for key, _ in ESTIMATES:
            estimate = row.get(key) if key else row
            cells += [number((estimate or {}).get("estimate")), interval(estimate)]
        cells += [number(row.get("lambda")), number(row.get("effective_n")), str(row.get("note") or "")]
        systems.append(cells)
    pairs = []
    for pair, row in (document.get("ppi_diff") or {}).items():
        if "skipped" in row:
            pairs.append([pair, "", "", "", "", "", "", f"skipped: {row['skipped']}"])
            continue
        pairs.append([pair, number(row.get("estimate")), interval(row), number(row.get("p_value")),
                      "yes" if row.get("excludes_zero") else "no", interval(row.get("human_only")),
                      number(row.get("effective_n")), str(row.get("note") or "")])  # fmt: skip
    return {"systems": systems, "pairs": pairs, "alpha": number((document.get("settings") or {}).get("alpha"))}


def _compare_view(document: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for pair, row in document["comparisons"].items():
        noisy, exact = row.get("with_judge_noise") or {}, row.get("judge_as_exact") or {}
        low, high = row.get("samples_per_item") or ["", ""]
        rows.append([pair, number(row.get("n_items")), f"{number(low)}-{number(high)}", number(row.get("mean_a")),
                     number(row.get("mean_b")), number(row.get("diff")),
                     interval(noisy), number(noisy.get("p_value")), "yes" if noisy.get("significant") else "no",
                     interval(exact), number(exact.get("p_value")), "yes" if exact.get("significant") else "no",
                     "yes" if row.get("significant_only_if_judge_exact") else "no"])  # fmt: skip
    return {"rows": rows, "alpha": number((document.get("settings") or {}).get("alpha"))}


UNTIED = (
    "undefined: the runs tie (before or after)"  # tau-b needs two distinct values before and after (fill_report._tau_b)
)


def kept_copy(named: str, result: str) -> str:
    """``named`` (a path a result file recorded) as the run folder holding ``result`` keeps it: the copy of
    the same name beside ``result`` or in the folder's ``files/``, so a moved or unzipped folder names its own
    file; ``named`` when no copy is there."""
    if not named:
        return named
    here = Path(result).parent
    files = next((p for p in (here, *here.parents) if p.name == "files"), here)
    for folder in (here, files):
        if (folder / Path(named).name).is_file():
            return str(folder / Path(named).name)
    return named


def _fill_view(document: dict[str, Any]) -> dict[str, Any]:
    values, judged = [], []
    for run, measures in document["per_run"].items():
        for measure, row in measures.items():
            if "delta" in row:
                values.append([run, measure, number(row.get("before")), number(row.get("after")),
                               number(row.get("delta"))])  # fmt: skip
            else:
                judged.append([run, measure, number(row.get("before")), number(row.get("after"))])
    tau = [[measure, number(value) if value is not None else UNTIED]
           for measure, value in (document.get("kendall_tau_b") or {}).items()]  # fmt: skip
    flips = [
        [flip.get("run_a"), flip.get("run_b"), flip.get("measure"),
         *(f"diff {number(flip[w].get('diff'))}, p {number(flip[w].get('p_value'))}, "
           f"{'significant' if flip[w].get('significant') else 'not significant'}" for w in ("before", "after"))]
        for flip in document.get("significance_flips") or []
    ]  # fmt: skip
    counts = {k: number(v) for k, v in (document.get("fill_counts") or {}).items()}
    files = {"merged": str(document.get("merged_qrels_path", "")), "origin": str(document.get("origin_path", ""))}
    return {"measures": values, "judged": judged, "tau": tau, "flips": flips, "counts": counts, **files}


VIEWS = {"ppi": _ppi_view, "compare_judged": _compare_view, "fill_qrels": _fill_view}


def view(judged: dict[str, Any], label: str, image: str | None) -> dict[str, Any]:
    """One judged-numbers file as the page shows it: its tables (cells as text) and its chart."""
    shown = VIEWS[judged["tool"]](judged["document"])
    shown.update({key: kept_copy(shown[key], judged["path"]) for key in ("merged", "origin") if key in shown})
    return {"tool": judged["tool"], "label": label, "path": judged["path"], "image": image, **shown}


def title(judged: dict[str, Any], label: str) -> str:
    """The chart's title for one file."""
    return f"{judged['tool']}: {Path(label).stem}"
