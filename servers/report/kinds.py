"""Every result file the report reads, declared once: how to recognise it and how to read its runs.

A new result kind is one ``Kind`` in ``KINDS`` (and a test that renders it). Per-query values are
joined on the ids the file names (``id_ls``, item ``id``s, query ids), never on positions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from servers.report.judged.tables import read_compare_judged, read_fill_qrels, read_ppi
from servers.report.model import Found, Run, as_number, numeric_column
from servers.report.readers import new_run, read_consistency, read_mtrag_records, supported_vital
from servers.report.risk import read_risk_table, verdict
from ultra_base.errors import InputError

Reader = Callable[[Any, str], Found]
_TIMESTAMP = re.compile(r"_\d{8}_\d{6}(_\d+)?$")


@dataclass(frozen=True)
class Kind:
    """One kind of result file: its name, what it looks like, how to spot and read it."""

    name: str
    looks_like: str  # the shape, as error messages and the docs describe it
    detect: Callable[[Any], bool]
    read: Reader
    claims: Callable[[str, Sequence[str]], bool]  # (tool name, its declared outputs): does it write this kind?
    supersedes: tuple[str, ...] = ()  # kinds whose files in the same run folder this one already joins


def _tool(document: Any) -> str:
    return str(document.get("tool", "")) if isinstance(document, dict) else ""


def read_evaluate_trec(document: dict[str, Any], path: str) -> Found:
    run = new_run(Path(path).stem, "evaluate_trec", path, document.get("settings"))
    run.add_mapping(_mapping(document, "per_query", path), source=f"evaluate_trec: {path}", skip=set())
    return Found("evaluate_trec", [run])


def read_pvalue(document: dict[str, Any], path: str) -> Found:
    per_query = _mapping(document, "per_query", path)
    names = {"baseline": f"{Path(str(document.get('baseline', 'baseline'))).name} (baseline)"}
    runs = []
    for name, queries in per_query.items():
        run = new_run(names.get(name, Path(name).name), "evaluate_trec_pvalue", path)
        if not isinstance(queries, dict):
            raise InputError(f"per_query[{name!r}] must map query ids to measures", path=path)
        run.add_mapping(queries, source=f"evaluate_trec_pvalue: {path}", skip=set())
        runs.append(run)
    if runs:
        runs[0].parameters[f"evaluate_trec_pvalue: {Path(path).name}"] = document.get("settings", {})
    rows = [dict(row) for row in document.get("table", []) if isinstance(row, dict)]
    for row in rows:
        row["run"] = Path(str(row.get("run", ""))).name
    return Found("evaluate_trec_pvalue", runs, significance=rows)


def read_answer_lists(document: dict[str, Any], path: str) -> Found:
    """``evaluate`` / ``evaluate_mtrag``: per-item lists aligned with ``id_ls``."""
    settings = document.get("settings", {})
    kind = "evaluate_mtrag" if "mtrag_metrics" in settings else "evaluate" if "metrics" in settings else ""
    kind = kind or _TIMESTAMP.sub("", Path(path).stem)  # e.g. semantic_similarity_<time>.json
    ids = document.get("id_ls")
    lists = {k: v for k, v in document.items() if isinstance(v, list) and k != "id_ls"}
    if not isinstance(ids, list):
        raise InputError(
            f"this {kind} file has per-item lists but no id_ls, so its values cannot be joined on ids; "
            f"rerun {kind} (it now writes id_ls next to the per-item values)",
            path=path,
        )
    run = new_run(Path(path).stem, kind, path, settings)
    _declared(run, settings)
    for name, values in lists.items():
        column = numeric_column(values)
        if column is None:
            continue  # e.g. a list per item (per-passage values), summarised through its own _max column
        if len(values) != len(ids):
            raise InputError(
                f"{name} has {len(values)} values but id_ls has {len(ids)} ids: the file is misaligned; "
                f"rerun {kind} to rewrite it",
                path=path,
            )
        run.add_column(name, ids, column, source=f"{kind}: {path}")
    return Found(kind, [run])


def read_answer_judge(document: dict[str, Any], path: str) -> Found:
    """An LLM answer judge (``<kind>_judge``): ``items`` with ``id``, ``status`` and the judge's metrics."""
    tool = _tool(document)
    aggregate = document.get("aggregate", {})
    metrics = [k for k in aggregate if not k.startswith("num_") and f"num_{k}" in aggregate]
    items = document.get("items")
    if not isinstance(items, list) or not all(isinstance(i, dict) and "id" in i for i in items):
        raise InputError(f"{tool}: 'items' must be a list of objects with an 'id'", path=path)
    run = new_run(Path(path).stem, tool, path, document.get("settings"))
    ids = [str(item["id"]) for item in items]
    _declared(run, document)
    for item, key in zip(items, ids, strict=True):
        said, why = verdict(item, tuple(metrics))
        if said or why:
            run.rationales.setdefault(key, []).append((tool, said, why))
    for name in metrics:  # a failed item has no value (it is counted in n, never scored)
        given = run.add_column(
            name, ids, [i.get(name) if i.get("status") == "ok" else None for i in items], source=tool
        )
        recorded = judge_samples(items, ids, name)
        if recorded:
            run.samples[given] = recorded
    found = Found(tool, [run], scalars=panel_scalars(document))
    if tool == "idk_judge":
        ok = [i for i in items if i.get("status") == "ok" and i.get("answer_attempted") is not None]
        answered = sum(float(i["answer_attempted"]) for i in ok)
        run.answered = {"answered": answered, "judged": len(ok), "items": len(items)}
    failed = sum(i.get("status") in ("error", "parse_error") for i in items)
    if failed:
        run.failures[tool] = failed
    failed = len(items) - sum(i.get("status") == "ok" for i in items)
    if failed:
        found.notes.append(f"{tool} ({Path(path).name}): {failed} of {len(items)} items were not judged (no value)")
    return found


def judge_samples(items: list[dict[str, Any]], ids: list[str], metric: str) -> dict[str, np.ndarray]:
    """Per ok item its judge samples of ``metric`` (``sample_values``, written by a judge run with
    ``judge_llm.samples: k``; failed samples left out); {} when no item recorded any or ids repeat."""
    if len(set(ids)) != len(ids):
        return {}
    found = {}
    for item, key in zip(items, ids, strict=True):
        listed = (item.get("sample_values") or {}).get(metric) if item.get("status") == "ok" else None
        values = [as_number(v) for v in listed or [] if v is not None]
        if values and all(math.isfinite(v) for v in values):
            found[key] = np.asarray(values)
    return found


def _declared(run: Run, document: Any) -> None:
    """What a result file recorded of its metrics from the tool's registry: ``metric_kinds`` (the chart) and
    ``higher_is_better`` (compare's better and worse; a metric it does not name is higher-is-better)."""
    kinds, directions = (
        document.get(k) if isinstance(document, dict) else None for k in ("metric_kinds", "higher_is_better")
    )
    run.kinds.update({str(k): str(v) for k, v in kinds.items()} if isinstance(kinds, dict) else {})
    run.lower_is_better.update(
        str(k) for k, up in (directions if isinstance(directions, dict) else {}).items() if up is False
    )


def read_umbrela(document: dict[str, Any], path: str) -> Found:
    run = new_run(Path(path).stem, "umbrela_judge", path, document.get("settings"))
    run.add_mapping(_mapping(document, "per_query", path), source=f"umbrela_judge: {path}", skip=set())
    return Found("umbrela_judge", [run], scalars=panel_scalars(document))


def panel_scalars(document: dict[str, Any]) -> dict[str, float]:
    """A jury's agreement and the samples' noise per metric (the result's ``panel.reliability``), as scalars."""
    reliability = (document.get("panel") or {}).get("reliability") or {}
    return {
        f"{metric} {name}": float(figures[name])
        for metric, figures in reliability.items()
        if isinstance(figures, dict)
        for name in ("alpha", "mean_kappa", "within_item_share", "mean_spread")
        if isinstance(figures.get(name), int | float)
    }


def read_nuggetize(document: dict[str, Any], path: str) -> Found:
    by_run: dict[str, dict[str, dict[str, Any]]] = {}
    for qid, runs in _mapping(document, "per_query", path).items():
        for name, scores in runs.items():
            ok = scores.get("status") == "ok"
            by_run.setdefault(str(name), {})[str(qid)] = {k: v for k, v in scores.items() if ok or k == "num_nuggets"}
    supported = supported_vital(document, path)
    runs = []
    for name, per_query in by_run.items():
        run = new_run(name, "nuggetize", path)
        run.add_mapping(per_query, source=f"nuggetize: {path}", skip=set())
        run.nuggets = supported.get(name, {})
        runs.append(run)
    if runs:
        runs[0].parameters[f"nuggetize: {Path(path).name}"] = document.get("settings", {})
    return Found("nuggetize", runs, scalars=panel_scalars(document))


def read_agreement(document: dict[str, Any], path: str) -> Found:
    scalars = {k: float(v) for k, v in document.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return Found("judge_agreement", scalars=scalars)


def read_trec_rag_table(rows: list[dict[str, Any]], path: str) -> Found:
    """``trec_rag_table``'s JSON: a row per (query, run); one report run per run."""
    by_run: dict[str, dict[str, dict[str, Any]]] = {}
    for position, row in enumerate(rows):
        qid = str(row["qid"])
        group = by_run.setdefault(str(row["run"]), {})
        if qid in group:
            raise InputError(f"row {position} repeats query {qid!r} of run {row['run']!r}", path=path)
        group[qid] = row
    runs = []
    for name, per_query in by_run.items():
        run = new_run(name, "trec_rag_table", path)
        run.add_mapping(per_query, source=f"trec_rag_table: {path}", skip={"qid", "run"})
        attempted = [r["answer_attempted"] for r in per_query.values() if r.get("answer_attempted") is not None]
        if attempted:
            run.answered = {"answered": float(sum(attempted)), "judged": len(attempted), "items": len(per_query)}
        runs.append(run)
    return Found("trec_rag_table", runs)


def read_sweep(document: dict[str, Any], path: str) -> Found:
    """``ultra sweep``'s sweep.json: each finished trial is a run folder of its own."""
    keys = [str(k) for k in document.get("keys", [])]
    folders = []
    for row in document.get("rows", []):
        if row.get("status") == "ok" and row.get("folder"):
            setting = ", ".join(f"{k.rsplit('.', 1)[-1]}={row.get(k)}" for k in keys)
            folders.append((f"trial {row.get('trial')} ({setting})", str(row["folder"])))
    columns = ["trial", "rank", "status", *keys, str(document.get("metric", ""))]
    table = {"metric": document.get("metric"), "columns": columns, "rows": document.get("rows", [])}
    return Found("sweep", folders=folders, sweep=table)


def _mapping(document: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    value = document.get(key)
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise InputError(f"'{key}' must map ids to objects of values", path=path)
    return value


def _is_table(document: Any) -> bool:
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(r, dict) and "qid" in r and "run" in r for r in document)
    )


def _has(*keys: str) -> Callable[[Any], bool]:
    return lambda document: isinstance(document, dict) and all(k in document for k in keys)


def _answer_lists(document: Any) -> bool:
    if not isinstance(document, dict) or _tool(document):
        return False
    settings = document.get("settings")
    named = isinstance(settings, dict) and ("metrics" in settings or "mtrag_metrics" in settings)
    return named or isinstance(document.get("id_ls"), list)


def _named(*tools: str) -> Callable[[str, Sequence[str]], bool]:
    return lambda tool, outputs: tool in tools


def _outputs(*names: str) -> Callable[[str, Sequence[str]], bool]:
    return lambda tool, outputs: set(names) <= set(outputs)


KINDS: tuple[Kind, ...] = (  # tried in this order: files naming their tool first
    Kind(
        "umbrela_judge",
        'an object with tool "umbrela_judge" and per_query {qid: {metric: value}}',
        lambda d: _tool(d) == "umbrela_judge",
        read_umbrela,
        _named("umbrela_judge"),
    ),
    Kind(
        "nuggetize",
        'an object with tool "nuggetize" and per_query {qid: {run: scores}}',
        lambda d: _tool(d) == "nuggetize",
        read_nuggetize,
        _named("nuggetize"),
    ),
    Kind(
        "judge_agreement",
        'an object with tool "judge_agreement" (kappa and agreement figures)',
        lambda d: _tool(d) == "judge_agreement",
        read_agreement,
        _named("judge_agreement"),
    ),
    Kind(
        "risk_table",
        'an object with tool "risk_table" and rows [{kind, category, n, measure, rate, ci_low, ci_high ...}]',
        lambda d: _tool(d) == "risk_table",
        read_risk_table,
        _named("risk_table"),
    ),
    Kind(
        "ppi",
        'an object with tool "ppi", ppi_res {system: {estimate, ci, classical, judge_only, human_only ...}}',
        lambda d: _tool(d) == "ppi",
        read_ppi,
        _named("ppi"),
    ),
    Kind(
        "compare_judged",
        'an object with tool "compare_judged" and comparisons {"A - B": {diff, with_judge_noise, judge_as_exact}}',
        lambda d: _tool(d) == "compare_judged",
        read_compare_judged,
        _named("compare_judged"),
    ),
    Kind(
        "fill_qrels",
        'an object with tool "fill_qrels", per_run {run: {measure: {before, after}}} and kendall_tau_b',
        lambda d: _tool(d) == "fill_qrels",
        read_fill_qrels,
        _named("fill_qrels"),
    ),
    Kind(
        "answer judge",
        'an object with tool "<kind>_judge", aggregate and items [{id, status, metrics...}]',
        lambda d: _tool(d).endswith("_judge") and isinstance(d.get("items"), list),
        read_answer_judge,
        _outputs("result_path", "aggregate", "items"),
    ),
    Kind(
        "evaluate_trec_pvalue",
        "an object with table, baseline, runs and per_query {run: {qid: {measure: value}}}",
        _has("table", "baseline", "runs", "per_query"),
        read_pvalue,
        _named("evaluate_trec_pvalue"),
    ),
    Kind(
        "evaluate_trec",
        "an object with aggregate, counts and per_query {qid: {measure: value}}",
        lambda d: _has("aggregate", "counts", "per_query")(d) and not _tool(d),
        read_evaluate_trec,
        _named("evaluate_trec"),
    ),
    Kind(
        "consistency",
        "an object with id_ls, num_runs, answers {overall, per_query} and scores",
        lambda d: _has("id_ls", "num_runs", "answers", "scores")(d) and not _tool(d),
        read_consistency,
        _named("consistency"),
    ),
    Kind(
        "mtrag_evaluated_records",
        "an object with records_path (mtrag_evaluated_records' summary) naming the records (JSON Lines)",
        _has("records_path", "n_records"),
        read_mtrag_records,
        _named("mtrag_evaluated_records"),
    ),
    Kind(
        "evaluate / evaluate_mtrag / per-item lists",
        "an object with id_ls and a list of per-item values per metric (evaluate, evaluate_mtrag, "
        "semantic_similarity ...)",
        _answer_lists,
        read_answer_lists,
        _outputs("result_path", "eval_res", "settings"),
    ),
    Kind(
        "trec_rag_table",
        "a list of row objects with qid and run (trec_rag_table's JSON)",
        _is_table,
        read_trec_rag_table,
        _named("trec_rag_table"),
        supersedes=("umbrela_judge", "nuggetize", "citation_judge", "idk_judge"),
    ),
    Kind(
        "sweep",
        "ultra sweep's sweep.json: an object with keys, metric, columns and rows",
        _has("keys", "metric", "columns", "rows"),
        read_sweep,
        _named(),  # written by `ultra sweep`, not by a tool
    ),
)

# Tools that write a file which is not a result to report, and why (every other tool that writes a file
# must be claimed by a kind above: tests/report/test_registry.py walks every server's tools).
NOT_RESULTS = {
    "generate": "the generated answers: the report takes them from the run's memory.json (pred_ls)",
    "report": "the report itself",
    "compare": "a comparison page (the report's own)",
}


def kind_of(document: Any) -> Kind | None:
    """The kind whose shape ``document`` has, or None."""
    return next((kind for kind in KINDS if kind.detect(document)), None)


def expected_shapes() -> str:
    """Every kind the report reads and its shape, for error messages."""
    return "; ".join(f"{kind.name} ({kind.looks_like})" for kind in KINDS)
