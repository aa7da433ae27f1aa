"""MCP tools for answers: ``evaluate`` (QA metrics) and ``evaluate_mtrag`` (MT-RAG's algorithmic metrics).

Both take their data as variables from earlier pipeline steps (``benchmark.get_data`` maps
``pred_ls``, ``gt_ls`` and ``ctx_ls``) and write one JSON file under ``save_path`` holding the
per-item lists, the ``avg_<metric>`` means (UltraRAG's shape), the settings and the versions;
both files also hold ``id_ls``, the item ids the per-item lists are aligned with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from servers.evaluation import answers, mtrag
from servers.evaluation.bertscore import WHEEL_MODEL
from ultra_kit.errors import InputError
from ultra_kit.factory import __version__, tool_hints
from ultra_kit.files import atomic_write_json, result_path
from ultra_kit.progress import progress_from_context

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

GoldInput = str | list[str | list[str]]
PassageInput = str | dict[str, Any]


class EvaluateResult(TypedDict):
    """``eval_res``: {metric: [per item], "avg_<metric>": mean, ...}; the settings; the file written."""

    eval_res: dict[str, Any]
    settings: dict[str, Any]
    result_path: str


SavePathParam = Annotated[str, Field(description="directory (file <tool>_<timestamp>.json) or file name")]


def _save(tool: str, save_path: str, eval_res: dict[str, Any], settings: dict[str, Any]) -> str:
    path = result_path(save_path, tool)
    atomic_write_json(path, {**eval_res, "settings": settings, "versions": {"ultra-eval": __version__}})
    return str(path)


@tool_hints(read_only=False, idempotent=True)
def evaluate(
    *,
    pred_ls: Annotated[list[str], Field(description="predictions, one per item")],
    gt_ls: Annotated[
        list[GoldInput],
        Field(
            description="golds per item: a string, a list of aliases, or a list of answer sets (lists of aliases); "
            '[] or "" = no answer (SQuAD v2)'
        ),
    ],
    id_ls: Annotated[
        list[Any] | None,
        Field(description="item ids, written with the per-item values in the result file (default: positions 0..n-1)"),
    ] = None,
    metrics: Annotated[Sequence[str], Field(description=f"answer metrics: {answers.describe_names()}")],
    normalize: Annotated[str, Field(description="squad or ultrarag")],
    rouge_stemmer: Annotated[bool, Field(description="Porter stemming inside rouge-1/2/l (rouge-score use_stemmer)")],
    wordnet_path: Annotated[
        str, Field(description="meteor: a WordNet directory; '' = NLTK data or /usr/share/wordnet")
    ],
    save_path: SavePathParam,
    ctx: Context | None = None,
) -> EvaluateResult:
    """Score predictions against golden answers with QA metrics (UltraRAG's `evaluate`, exact ROUGE).

    The metrics are listed with the `metrics` field; each is the maximum over an item's golds,
    except stringem (mean over answer sets) and bleu (all golds are references). An item without
    an answer scores 1 if the prediction normalises to nothing (SQuAD v2), with HasAns/NoAns means.
    Returns eval_res with a per-item list per metric and avg_<metric>, and writes it with id_ls to a JSON file.
    """
    report = progress_from_context(ctx)
    eval_res = answers.evaluate_answers(
        pred_ls,
        gt_ls,
        metrics=metrics,
        normalize=normalize,
        rouge_stemmer=rouge_stemmer,
        wordnet_path=wordnet_path,
        progress=report,
    )
    ids = item_ids(id_ls, len(pred_ls))
    names = answers.resolve_metrics(metrics)
    settings = {"metrics": names, "normalize": normalize, "rouge_stemmer": bool(rouge_stemmer), "n_items": len(pred_ls)}
    given = {"rouge_stemmer": bool(rouge_stemmer), "wordnet_path": wordnet_path}
    settings.update({name: given[name] for name in answers.settings_read(names) if name not in settings})
    path = _save("evaluate", save_path, {"id_ls": ids, **eval_res}, settings)
    return {"eval_res": eval_res, "settings": settings, "result_path": path}


def item_ids(id_ls: list[Any] | None, count: int) -> list[Any]:
    """The items' ids: ``id_ls`` (one per prediction, kept as given) or the positions 0..count-1."""
    if id_ls is None:
        return list(range(count))
    if not isinstance(id_ls, list) or len(id_ls) != count:
        size = len(id_ls) if isinstance(id_ls, list) else type(id_ls).__name__
        raise InputError(f"id_ls has {size} ids but pred_ls has {count} predictions; give one id per item")
    return list(id_ls)


@tool_hints(read_only=False, idempotent=True)
def evaluate_mtrag(
    *,
    pred_ls: Annotated[list[str], Field(description="predictions, one per record")],
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
    result with id_ls (the record ids the per-record lists follow) to a JSON file.
    """
    report = progress_from_context(ctx)
    ids = item_ids(id_ls, len(pred_ls))
    eval_res = mtrag.evaluate_mtrag_records(
        pred_ls,
        gt_ls,
        ctx_ls,
        answerability_ls=answerability_ls,
        idk_ls=idk_ls,
        mtrag_metrics=mtrag_metrics,
        bertscore_model=bertscore_model,
        bertscore_layer=bertscore_layer,
        progress=report,
    )
    names = mtrag.resolve_mtrag_metrics(mtrag_metrics)
    settings: dict[str, Any] = {
        "mtrag_metrics": names,
        "idk_conditioning": idk_ls is not None,
        "n_records": len(pred_ls),
    }
    given = {"bertscore_model": bertscore_model, "bertscore_layer": bertscore_layer}
    settings.update({name: given[name] for name in mtrag.settings_read(names)})
    if "bertscore_model" in settings:
        settings["bertscore_rescaled"] = False
    return {
        "eval_res": eval_res,
        "settings": settings,
        "result_path": _save("evaluate_mtrag", save_path, {"id_ls": ids, **eval_res}, settings),
    }


TOOLS = [evaluate, evaluate_mtrag]
