"""Every result file the report reads, declared once: how to recognise it and how to read its runs.

A new result kind is one ``Kind`` in ``KINDS`` (and a test that renders it). Per-query values are
joined on the ids the file names (``id_ls``, item ``id``s, query ids), never on positions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from servers.report.judged.tables import read_compare_judged, read_fill_qrels, read_ppi
from servers.report.kinds.answers import read_answer_judge, read_answer_lists
from servers.report.kinds.judges import read_agreement, read_nuggetize, read_umbrela
from servers.report.kinds.shapes import answer_lists, has, is_table, tool_of
from servers.report.kinds.sweep import read_sweep
from servers.report.kinds.target import TARGET_RECORDS, is_target_records, read_target_records
from servers.report.kinds.trec import read_evaluate_trec, read_pvalue, read_trec_rag_table
from servers.report.model import Found
from servers.report.readers import read_consistency, read_mtrag_records
from servers.report.risk import read_risk_table
from ultra_base.registry import Registry

Reader = Callable[[Any, str], Found]


@dataclass(frozen=True)
class Kind:
    """One kind of result file: its name, what it looks like, how to spot and read it."""

    name: str
    looks_like: str  # the shape, as error messages and the docs describe it
    detect: Callable[[Any], bool]
    read: Reader
    claims: Callable[[str, Sequence[str]], bool]  # (tool name, its declared outputs): does it write this kind?
    supersedes: tuple[str, ...] = ()  # kinds whose files in the same run folder this one already joins


def _named(*tools: str) -> Callable[[str, Sequence[str]], bool]:
    return lambda tool, outputs: tool in tools


def _outputs(*names: str) -> Callable[[str, Sequence[str]], bool]:
    return lambda tool, outputs: set(names) <= set(outputs)


KINDS: Registry[Kind] = Registry(
    "report kind",
    (  # tried in this order: files naming their tool first
        Kind(
            "umbrela_judge",
            'an object with tool "umbrela_judge" and per_query {qid: {metric: value}}',
            lambda d: tool_of(d) == "umbrela_judge",
            read_umbrela,
            _named("umbrela_judge"),
        ),
        Kind(
            "nuggetize",
            'an object with tool "nuggetize" and per_query {qid: {run: scores}}',
            lambda d: tool_of(d) == "nuggetize",
            read_nuggetize,
            _named("nuggetize"),
        ),
        Kind(
            "judge_agreement",
            'an object with tool "judge_agreement" (kappa and agreement figures)',
            lambda d: tool_of(d) == "judge_agreement",
            read_agreement,
            _named("judge_agreement"),
        ),
        Kind(
            "risk_table",
            'an object with tool "risk_table" and rows [{kind, category, n, measure, rate, ci_low, ci_high ...}]',
            lambda d: tool_of(d) == "risk_table",
            read_risk_table,
            _named("risk_table"),
        ),
        Kind(
            "ppi",
            'an object with tool "ppi", ppi_res {system: {estimate, ci, classical, judge_only, human_only ...}}',
            lambda d: tool_of(d) == "ppi",
            read_ppi,
            _named("ppi"),
        ),
        Kind(
            "compare_judged",
            'an object with tool "compare_judged" and comparisons {"A - B": {diff, with_judge_noise, judge_as_exact}}',
            lambda d: tool_of(d) == "compare_judged",
            read_compare_judged,
            _named("compare_judged"),
        ),
        Kind(
            "fill_qrels",
            'an object with tool "fill_qrels", per_run {run: {measure: {before, after}}} and kendall_tau_b',
            lambda d: tool_of(d) == "fill_qrels",
            read_fill_qrels,
            _named("fill_qrels"),
        ),
        Kind(
            "answer judge",
            'an object with tool "<kind>_judge", aggregate and items [{id, status, metrics...}]',
            lambda d: tool_of(d).endswith("_judge") and isinstance(d.get("items"), list),
            read_answer_judge,
            _outputs("result_path", "aggregate", "items"),
        ),
        Kind(
            "evaluate_trec_pvalue",
            "an object with table, baseline, runs and per_query {run: {qid: {measure: value}}}",
            has("table", "baseline", "runs", "per_query"),
            read_pvalue,
            _named("evaluate_trec_pvalue"),
        ),
        Kind(
            "evaluate_trec",
            "an object with aggregate, counts and per_query {qid: {measure: value}}",
            lambda d: has("aggregate", "counts", "per_query")(d) and not tool_of(d),
            read_evaluate_trec,
            _named("evaluate_trec"),
        ),
        Kind(
            "consistency",
            "an object with id_ls, num_runs, answers {overall, per_query} and scores",
            lambda d: has("id_ls", "num_runs", "answers", "scores")(d) and not tool_of(d),
            read_consistency,
            _named("consistency"),
        ),
        Kind(
            "mtrag_evaluated_records",
            "an object with records_path (mtrag_evaluated_records' summary) naming the records (JSON Lines)",
            has("records_path", "n_records"),
            read_mtrag_records,
            _named("mtrag_evaluated_records"),
        ),
        Kind(
            "evaluate / evaluate_mtrag / per-item lists",
            "an object with id_ls and a list of per-item values per metric (evaluate, evaluate_mtrag, "
            "semantic_similarity ...)",
            answer_lists,
            read_answer_lists,
            _outputs("result_path", "eval_res", "settings"),
        ),
        Kind(
            "trec_rag_table",
            "a list of row objects with qid and run (trec_rag_table's JSON)",
            is_table,
            read_trec_rag_table,
            _named("trec_rag_table"),
            supersedes=("umbrela_judge", "nuggetize", "citation_judge", "idk_judge"),
        ),
        Kind("target.ask", TARGET_RECORDS, is_target_records, read_target_records, _named("ask")),
        Kind(
            "sweep",
            "ultra sweep's sweep.json: an object with keys, metric, columns and rows",
            has("keys", "metric", "columns", "rows"),
            read_sweep,
            _named(),  # written by `ultra sweep`, not by a tool
        ),
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
    return next((kind for kind in KINDS.values() if kind.detect(document)), None)


def expected_shapes() -> str:
    """Every kind the report reads and its shape, for error messages."""
    return "; ".join(f"{kind.name} ({kind.looks_like})" for kind in KINDS.values())
