"""``risk_route`` sends each question to its judges; ``risk_table`` writes the safe / grounded rates."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.synth.dataset import dataset_rows
from ultra_base.errors import InputError
from ultra_kit.factory import tool_hints

ItemList = Annotated[list[Any] | None, Field(description="per-question judged items (a judge's `items`), or null")]


class RouteResult(TypedDict):
    route: list[str]
    kind_ls: list[str]
    category_ls: list[str]


class TableResult(TypedDict):
    risk_table: list[dict[str, Any]]
    table_path: str
    table_csv_path: str


@tool_hints(read_only=True, idempotent=True)
def risk_route(
    id_ls: Annotated[list[str], Field(description="question ids (from benchmark.get_data)")],
    *,
    dataset_dir: Annotated[str, Field(description="the folder generate_queries wrote")],
) -> RouteResult:
    """Route each question by its kind: `grounded` questions to the groundedness judges, off-topic and
    jailbreak ones to `guardrail` (use in a pipeline `branch` with those two branches)."""
    by_id = {str(row["id"]): row for row in dataset_rows(dataset_dir)}
    missing = [qid for qid in id_ls if str(qid) not in by_id]
    if missing:
        raise InputError(f"ids not in the query set of {dataset_dir}: {missing[:5]}")
    kinds = [by_id[str(qid)]["kind"] for qid in id_ls]
    return {
        "route": ["grounded" if kind == "grounded" else "guardrail" for kind in kinds],
        "kind_ls": kinds,
        "category_ls": [by_id[str(qid)]["category"] for qid in id_ls],
    }


@tool_hints(read_only=False, idempotent=True)
def risk_table(
    id_ls: Annotated[list[str], Field(description="question ids (from benchmark.get_data)")],
    judged_items: Annotated[
        list[Any],
        Field(
            description="per question: its faithfulness item (grounded) or guardrail_judge item (off-topic, jailbreak)"
        ),
    ],  # fmt: skip
    relevancy_items: ItemList = None,
    toxicity_items: ItemList = None,
    bias_items: ItemList = None,
    *,
    dataset_dir: Annotated[str, Field(description="the folder generate_queries wrote")],
    toxicity_threshold: Annotated[float, Field(description="toxic when probability >= this", ge=0, le=1)],
    table_path: Annotated[str, Field(description="folder (risk_table_<timestamp>.json/.csv) or a .json file name")],
) -> TableResult:
    """The risk table, one row per kind x category/technique: n, the safe (guardrail) or grounded (faithfulness
    = 1) rate with its 95% Wilson interval, the toxicity rate, the bias score, and the failures. Writes JSON
    and CSV. Items that failed (error / parse_error) count as failures, never in a rate."""
    from servers.synth.risk_table import as_csv, build_table
    from ultra_kit.files import atomic_write_json, atomic_write_text, result_path

    rows = dataset_rows(dataset_dir)
    table = build_table(
        rows, [str(i) for i in id_ls], judged_items=judged_items, relevancy_items=relevancy_items,
        toxicity_items=toxicity_items, bias_items=bias_items, toxicity_threshold=toxicity_threshold,
    )  # fmt: skip
    path = result_path(table_path, "risk_table", ".json")
    settings = {"dataset_dir": dataset_dir, "toxicity_threshold": toxicity_threshold}
    atomic_write_json(path, {"tool": "risk_table", "rows": table, "settings": settings})
    csv_path = atomic_write_text(path.with_suffix(".csv"), as_csv(table))
    return {"risk_table": table, "table_path": str(path), "table_csv_path": str(csv_path)}


TOOLS = [risk_route, risk_table]
