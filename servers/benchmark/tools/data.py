"""``get_data``: load a dataset into aligned lists for the pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Field, with_config
from typing_extensions import NotRequired, TypedDict

from servers.benchmark.dataset import load_dataset
from servers.benchmark.delivery import delivered
from ultra_kit.factory import tool_hints
from ultra_kit.inprocess import OUTPUTS_FROM
from ultra_kit.settings import complete_mapping


class BenchmarkSpec(TypedDict, total=False):
    """Which dataset to load and how; omitted keys take the defaults shown in parameter.yaml."""

    name: str
    path: str
    format: str
    split: str | None
    key_map: dict[str, str]
    limit: int
    shuffle: bool
    seed: int
    max_bytes: int
    traces: dict[str, Any]
    filters: dict[str, Any]
    dedup: str
    sample: dict[str, Any]
    group_by: str
    max_result_bytes: Annotated[int, Field(strict=True, ge=-1)]  # true is not 1
    save_path: str


class DataInfo(TypedDict):
    name: str
    path: str
    total_rows: int
    kept_rows: int
    dropped_rows: int
    dropped_reasons: dict[str, int]
    notes: dict[str, int]
    group_by: str


@with_config(ConfigDict(extra="allow", json_schema_extra={OUTPUTS_FROM: "benchmark.key_map"}))
class GetDataResult(TypedDict):
    """One list per ``key_map`` variable (the usual ones below, or any other name, e.g. choices_ls) and data_info."""

    q_ls: NotRequired[list[Any]]
    gt_ls: NotRequired[list[Any]]
    pred_ls: NotRequired[list[Any]]
    id_ls: NotRequired[list[Any]]
    ctx_ls: NotRequired[list[Any]]
    answerability_ls: NotRequired[list[Any]]
    idk_ls: NotRequired[list[Any]]
    group_ls: NotRequired[list[Any]]
    data_path: NotRequired[str]
    data_info: DataInfo


@tool_hints(read_only=True, idempotent=True)
def get_data(
    *,
    benchmark: Annotated[
        BenchmarkSpec,
        Field(
            description="path, key_map (output variable, e.g. q_ls/gt_ls/pred_ls/id_ls/ctx_ls/answerability_ls/"
            "idk_ls or any other name such as choices_ls -> source field), limit, shuffle, seed, "
            'name ("" = the file\'s), max_bytes (a larger data file is refused unread); traces (otlp, langfuse, '
            "langsmith: answer_span, metadata, max_attribute_chars; otlp: logs, a file of logs apart from the spans), "
            "filters, dedup, sample, group_by (-> group_ls); "
            "max_result_bytes (a larger result is written to a file under save_path and only data_path and "
            "data_info are returned: large results are slow to read over MCP; -1 = always the lists)"
        ),
    ],
) -> GetDataResult:
    """Load a dataset (JSONL, JSON list, CSV/TSV, Parquet, BEIR folder, SQuAD, RAGAS JSON or traces) as aligned lists.

    Each variable of `key_map` becomes one list with an entry per record. A record missing a mapped
    field is dropped whole; `data_info` says how many and why, and counts what the reader noticed
    (`notes`, e.g. BEIR qrels documents absent from the corpus). When no record is left (an empty
    file, or every record dropped) the tool fails with the count read and the drop reasons. A result larger
    than `max_result_bytes` is written to a file under `save_path` instead, whose path is `data_path`.
    """
    spec = complete_mapping(dict(benchmark), server="benchmark", setting="benchmark")
    path = str(spec["path"] or "")
    loaded = load_dataset(
        path,
        spec["key_map"] or {},
        limit=spec["limit"],
        shuffle=bool(spec["shuffle"]),
        seed=int(spec["seed"]),
        fmt=spec["format"] or "auto",
        split=spec["split"],
        max_bytes=spec["max_bytes"],
        settings=spec,
    )
    info: DataInfo = {
        "name": spec["name"] or Path(path.rstrip("/")).stem,  # no name given: the data file's (or folder's)
        "path": path,
        "total_rows": loaded.total_rows,
        "kept_rows": loaded.kept_rows,
        "dropped_rows": sum(loaded.dropped.values()),
        "dropped_reasons": dict(loaded.dropped),
        "notes": dict(loaded.notes),
        "group_by": spec["group_by"] or "",
    }
    result = {**loaded.columns, "data_info": info}
    limit, save_path = spec["max_result_bytes"], spec["save_path"]
    return delivered(result, max_result_bytes=limit, save_path=save_path)  # type: ignore[return-value]


TOOLS = [get_data]
