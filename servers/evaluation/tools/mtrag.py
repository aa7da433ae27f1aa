"""MCP tools for MT-RAG: ``evaluate_mtrag`` scores answers with MT-RAG's algorithmic metrics and RB_agg;
the others serve MT-RAG's full evaluation (``examples/mtrag_full.yaml``).

``evaluate_mtrag`` writes one JSON file under ``save_path`` holding the per-record lists, the
``avg_<metric>`` means, the settings, the versions and ``id_ls``. ``mtrag_judge_inputs`` turns MT-RAG
task fields into the judges' inputs; ``mtrag_evaluated_records`` conditions RB_agg, RB_llm and RL_F on
the IDK judgement and writes each task record in MT-RAG's evaluated-record layout (JSON Lines), so
MT-RAG's own analysis scripts read the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.evaluation.answers.bertscore import WHEEL_MODEL
from servers.evaluation.mtrag import layout
from servers.evaluation.mtrag import metrics as mtrag
from servers.evaluation.mtrag.evaluate import run_evaluate_mtrag
from servers.evaluation.results import EvaluateResult, SavePathParam
from ultra_base.errors import InputError
from ultra_kit.factory import __version__, tool_hints
from ultra_kit.files import atomic_write_json, atomic_write_jsonl, result_path
from ultra_kit.progress import progress_from_context
from ultra_kit.readers import read_jsonl

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context


PassageInput = str | dict[str, Any]


class JudgeInputs(TypedDict):
    """What ``idk_judge``, ``faithfulness`` and ``rag_judge`` read, one entry per record."""

    inquiry_ls: list[str]
    reference_ls: list[str]
    passage_ls: list[list[str]]


class EvaluatedRecords(TypedDict):
    """``eval_res``: avg_<field> over the records with a value, missing_<field> counts; the files written."""

    eval_res: dict[str, Any]
    result_path: str
    summary_path: str


@tool_hints(read_only=False, idempotent=True)
def evaluate_mtrag(
    *,
    pred_ls: Annotated[
        list[str | None], Field(description="predictions, one per record; None = the system failed (skipped, counted)")
    ],
    gt_ls: Annotated[
        list[str | list[PassageInput]],
        Field(description="targets per record: a string or a list of strings / {'text': ...} objects"),
    ],
    ctx_ls: Annotated[
        list[list[PassageInput]] | None,
        Field(description="passages per record: strings or {'text': ...} objects (MT-RAG 'contexts'); [] for none"),
    ] = None,
    answerability_ls: Annotated[
        list[str | list[str]] | None,
        Field(description="ANSWERABLE | PARTIAL | UNANSWERABLE | CONVERSATIONAL per record (for RB_agg_idk)"),
    ] = None,
    idk_ls: Annotated[
        list[float] | None,
        Field(description="IDK judgement per record: 1 = says it does not know, 0 = does not, 0.5 = partly"),
    ] = None,
    id_ls: Annotated[
        list[Any] | None,
        Field(description="record ids, written with the per-record values in the result file (default: 0..n-1)"),
    ] = None,
    mtrag_metrics: Annotated[Sequence[str], Field(description=f"MT-RAG metrics: {mtrag.describe_names()}")],
    bertscore_model: Annotated[
        str, Field(description=f"'{WHEEL_MODEL}' (the wheel's local model) or a local model directory")
    ],
    bertscore_layer: Annotated[int, Field(description="hidden layer for BERTScore (0 = embeddings)")],
    save_path: SavePathParam,
    ctx: Context | None = None,
) -> EvaluateResult:
    """Score answers with MT-RAG's algorithmic metrics and RB_agg (and RB_agg_idk given answerability and idk).

    The metrics are listed with the `mtrag_metrics` field. BERTScore runs on a local model (extra
    `bertscore`; by default all-MiniLM-L6-v2, not MT-RAG's deberta-xlarge-mnli, so absolute values
    differ). With answerability_ls and idk_ls: RB_agg_idk, MT-RAG's IDK conditioning. Writes the
    result with id_ls (the record ids the per-record lists follow) to a JSON file. A record whose prediction
    is None (target.ask: the system failed) is left out and listed in settings.failed_items.
    """
    return run_evaluate_mtrag(
        pred_ls,
        gt_ls,
        ctx_ls=ctx_ls,
        answerability_ls=answerability_ls,
        idk_ls=idk_ls,
        id_ls=id_ls,
        mtrag_metrics=mtrag_metrics,
        bertscore_model=bertscore_model,
        bertscore_layer=bertscore_layer,
        save_path=save_path,
        progress=progress_from_context(ctx),
    )


@tool_hints(read_only=True, idempotent=True)
def mtrag_judge_inputs(
    *,
    q_ls: Annotated[list[Any], Field(description="MT-RAG 'input' turns per record ([{speaker, text}, ...]) or text")],
    gt_ls: Annotated[list[Any], Field(description="MT-RAG 'targets' per record ([{text}, ...]) or text")],
    ctx_ls: Annotated[list[Any], Field(description="MT-RAG 'contexts' per record ([{document_id, text}, ...])")],
) -> JudgeInputs:
    """MT-RAG's judge inputs: the conversation as `speaker: text` lines, the first target, the passage texts.

    As MT-RAG's judge scripts build them: the IDK judge and RAGAS faithfulness read the whole
    conversation as the question, the RAD-Bench judge also reads the reference and the passages.
    """
    return layout.judge_inputs(q_ls, gt_ls, ctx_ls)  # type: ignore[return-value]


@tool_hints(read_only=False, idempotent=True)
def mtrag_evaluated_records(
    *,
    id_ls: Annotated[list[Any], Field(description="task_id per record (get_data's key_map: id_ls: task_id)")],
    answerability_ls: Annotated[
        list[Any], Field(description="ANSWERABLE | PARTIAL | UNANSWERABLE | CONVERSATIONAL per record")
    ],
    algorithmic_res: Annotated[dict[str, Any], Field(description="eval_res of evaluation.evaluate_mtrag")],
    idk_items: Annotated[list[dict[str, Any]], Field(description="items of judge.idk_judge (idk_eval)")],
    faithfulness_items: Annotated[list[dict[str, Any]], Field(description="items of judge.faithfulness (RL_F)")],
    rag_items: Annotated[list[dict[str, Any]], Field(description="items of judge.rag_judge (RB_llm)")],
    data_info: Annotated[dict[str, Any], Field(description="data_info of benchmark.get_data: the task file read")],
    save_path: Annotated[str, Field(description="directory (file <tool>_<timestamp>.jsonl) or a .jsonl file name")],
) -> EvaluatedRecords:
    """Write MT-RAG evaluated records: each task record with `metrics` (14 fields) after IDK conditioning.

    RL_F_idk, RB_llm_idk and RB_agg_idk follow MT-RAG's rule: an UNANSWERABLE or CONVERSATIONAL
    task scores 1 if the answer is an IDK (idk_eval = 1), else 0; an answerable one scores 0 if the
    answer is an IDK, else the metric. A failed judgement is null, never a score. Records are
    re-read from the task file get_data read (data_info.path, JSON Lines keyed by task_id).
    """
    ids = [str(value) for value in id_ls]
    path = str(data_info.get("path") or "") if isinstance(data_info, dict) else ""
    if not path:
        raise InputError("data_info has no path; pass the data_info that benchmark.get_data returned")
    sources = layout.records_by_id(read_jsonl(path), path)
    columns = layout.algorithmic_columns(algorithmic_res, len(ids))
    judged = {
        "idk_eval": layout.judged_values(idk_items, "idk", ids, "idk_judge"),
        "RL_F": layout.judged_values(faithfulness_items, "faithfulness", ids, "faithfulness"),
        "RB_llm": layout.judged_values(rag_items, "rag_score", ids, "rag_judge"),
    }
    records = layout.evaluated_records(sources, ids, answerability_ls, columns, judged, path)
    eval_res = layout.summary(records)
    out = result_path(save_path, "mtrag_evaluated_records", ".jsonl")
    atomic_write_jsonl(out, records)
    summary = {
        "records_path": str(out),
        **eval_res,
        "settings": {"source": path, "metric_fields": list(layout.METRIC_FIELDS)},
        "versions": {"ultra-eval": __version__},
    }
    summary_out = atomic_write_json(result_path(out.with_name(out.stem + "_summary.json"), "mtrag_summary"), summary)
    return {"eval_res": eval_res, "result_path": str(out), "summary_path": str(summary_out)}


TOOLS = [evaluate_mtrag, mtrag_judge_inputs, mtrag_evaluated_records]
