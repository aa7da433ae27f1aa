"""MT-RAG's full evaluation, last step: IDK conditioning and the evaluated-record layout.

IBM's ``run_generation_eval.py`` (the 5-step version: algorithmic, IDK judge, RAGAS faithfulness,
RAD-Bench judge, IDK conditioning) writes each task record back with a ``metrics`` object of 14
fields, each value a list: one entry for the per-answer metrics, one per passage for ``BertKPrec``
and ``Extractiveness_RougeL`` (left out, as IBM's scorer does, when a record has no passages).
This module builds those records from the columns of ``evaluate_mtrag`` and the items of the
``idk_judge``, ``faithfulness`` and ``rag_judge`` tools, and prepares the judges' inputs as IBM
does (the conversation as ``speaker: text`` lines, the first target, the passage texts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from servers.evaluation.mtrag.scores import answerability_label, idk_condition
from ultra_base.errors import InputError
from ultra_kit.mtrag.references import first_reference

ALGORITHMIC_FIELDS = (
    "Recall", "RougeL_stemFalse", "BertscoreP", "BertscoreR", "BertKPrec", "Extractiveness_RougeL", "Length", "RB_agg",
)  # fmt: skip
PER_PASSAGE_FIELDS = ("BertKPrec", "Extractiveness_RougeL")
JUDGED_FIELDS = {"idk_eval": "idk", "RL_F": "faithfulness", "RB_llm": "rag_score"}  # field -> the judge item's key
CONDITIONED_FIELDS = {"RL_F_idk": "RL_F", "RB_llm_idk": "RB_llm", "RB_agg_idk": "RB_agg"}
METRIC_FIELDS = (*ALGORITHMIC_FIELDS, *JUDGED_FIELDS, *CONDITIONED_FIELDS)
ID_FIELD = "task_id"


# --- the judges' inputs --------------------------------------------------------------------------


def conversation_text(turns: object, index: int) -> str:
    """IBM's ``extract_conversation``: ``speaker: text`` per turn, one per line; a string stays as it is."""
    if isinstance(turns, str):
        return turns
    if isinstance(turns, list) and turns and all(isinstance(t, dict) for t in turns):
        try:
            return "\n".join(f"{turn['speaker']}: {turn['text']}" for turn in turns)
        except KeyError as missing:
            raise InputError(f"q_ls[{index}]: a turn has no {missing} field; turns hold speaker, text") from None
    raise InputError(f"q_ls[{index}]: expected MT-RAG's input turns ([{{speaker, text}}, ...]) or a string")


def first_text(value: object, index: int) -> str:
    """IBM's ``extract_reference``: the first target's text (``ultra_kit.mtrag.references``); a record needs one."""
    text = first_reference(value, index)
    if text is None:
        raise InputError(f"gt_ls[{index}]: expected MT-RAG targets ([{{text}}, ...]) or a string, found {value!r}")
    return text


def passage_texts(value: object, index: int) -> list[str]:
    """IBM's ``extract_document_texts``: the text of each passage, in order."""
    if value is None:
        return []
    if isinstance(value, list):
        texts = [p if isinstance(p, str) else p.get("text") if isinstance(p, dict) else None for p in value]
        if all(isinstance(t, str) for t in texts):
            return texts
    raise InputError(f"ctx_ls[{index}]: expected MT-RAG contexts ([{{document_id, text}}, ...]) or strings")


def judge_inputs(q_ls: Sequence[object], gt_ls: Sequence[object], ctx_ls: Sequence[object]) -> dict[str, list]:
    """The three lists the judges read: ``inquiry_ls``, ``reference_ls`` and ``passage_ls``."""
    n = len(q_ls)
    for name, values in (("gt_ls", gt_ls), ("ctx_ls", ctx_ls)):
        if len(values) != n:
            raise InputError(f"q_ls has {n} records but {name} has {len(values)}; they must have equal length")
    return {
        "inquiry_ls": [conversation_text(v, i) for i, v in enumerate(q_ls)],
        "reference_ls": [first_text(v, i) for i, v in enumerate(gt_ls)],
        "passage_ls": [passage_texts(v, i) for i, v in enumerate(ctx_ls)],
    }


# --- reading the step results ---------------------------------------------------------------------


def judged_values(items: Sequence[dict[str, Any]], key: str, ids: Sequence[str], tool: str) -> list[float | None]:
    """Each record's judged value (None when the judge failed or gave none), checked against the ids."""
    if len(items) != len(ids):
        raise InputError(f"{tool} judged {len(items)} items but there are {len(ids)} records; judge every record")
    values: list[float | None] = []
    for position, (item, record_id) in enumerate(zip(items, ids, strict=True)):
        if not isinstance(item, dict) or str(item.get("id")) != record_id:
            found = item.get("id") if isinstance(item, dict) else item
            raise InputError(
                f"{tool} item {position} is for id {found!r}, record {position} is {record_id!r}; "
                "give the judge the same id_ls as get_data returned"
            )
        value = item.get(key) if item.get("status") == "ok" else None
        values.append(None if value is None else float(value))
    return values


def algorithmic_columns(algorithmic: dict[str, Any], n: int) -> dict[str, list]:
    """The per-record columns of ``evaluate_mtrag``'s ``eval_res`` that the layout holds."""
    if not isinstance(algorithmic, dict):
        raise InputError("algorithmic_res must be the eval_res of evaluation.evaluate_mtrag")
    columns = {name: algorithmic[name] for name in ALGORITHMIC_FIELDS if name in algorithmic}
    if "RB_agg" not in columns:
        raise InputError("algorithmic_res holds no RB_agg; keep RB_agg in mtrag_metrics (it is what IDK conditions)")
    for name, values in columns.items():
        if not isinstance(values, list) or len(values) != n:
            raise InputError(f"algorithmic_res.{name} must hold one value per record ({n})")
    return columns


def conditioned(value: float | None, answerability: str, idk: float | None) -> float | None:
    """IDK conditioning (``mtrag.idk_condition``); unknown when the IDK judgement is missing."""
    if idk is None:
        return None
    if value is None and answerability not in ("UNANSWERABLE", "CONVERSATIONAL") and idk != 1:
        return None
    return idk_condition(0.0 if value is None else value, answerability, idk)


# --- the records ------------------------------------------------------------------------------------


def without_nan(value: Any) -> Any:
    """NaN becomes null, as pandas' ``to_json`` writes it (MT-RAG's files hold NaN in unused fields)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: without_nan(item) for key, item in value.items()}
    if isinstance(value, list):
        return [without_nan(item) for item in value]
    return value


def records_by_id(records: Sequence[dict[str, Any]], path: str) -> dict[str, dict[str, Any]]:
    """The source records by ``task_id``; a missing or repeated id is an error naming the line."""
    found: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
    for line, record in enumerate(records, start=1):
        if ID_FIELD not in record:
            raise InputError(f"record has no {ID_FIELD}; MT-RAG task records are keyed by it", path=path, line=line)
        key = str(record[ID_FIELD])
        if key in found:
            raise InputError(f"{ID_FIELD} {key!r} repeats line {lines[key]}; one record per task", path=path, line=line)
        found[key], lines[key] = record, line
    return found


def record_metrics(columns: dict[str, list], judged: dict[str, list], label: str, i: int) -> dict[str, list]:
    """The ``metrics`` object of record ``i``: each field a list, as IBM's scripts write it."""
    metrics: dict[str, list] = {}
    for name, values in columns.items():
        value = values[i]
        if name in PER_PASSAGE_FIELDS:
            if value:  # no passages: IBM's scorer never creates the field
                metrics[name] = list(value)
        else:
            metrics[name] = [value]
    for name in JUDGED_FIELDS:
        metrics[name] = [judged[name][i]]
    idk = judged["idk_eval"][i]
    for name, source in CONDITIONED_FIELDS.items():
        metrics[name] = [conditioned(metrics[source][0], label, idk)]
    return metrics


def evaluated_records(
    sources: dict[str, dict[str, Any]],
    ids: Sequence[str],
    answerability_ls: Sequence[object],
    columns: dict[str, list],
    judged: dict[str, list],
    path: str,
) -> list[dict[str, Any]]:
    """Each record of ``ids`` as in the source file, with its ``metrics`` (earlier fields kept unless replaced)."""
    if len(answerability_ls) != len(ids):
        raise InputError(f"answerability_ls has {len(answerability_ls)} labels for {len(ids)} records")
    out = []
    for i, record_id in enumerate(ids):
        if record_id not in sources:
            raise InputError(f"no record with {ID_FIELD} {record_id!r}; map id_ls to {ID_FIELD} in key_map", path=path)
        record = without_nan(dict(sources[record_id]))
        label = answerability_label(answerability_ls[i], i)
        previous = record.get("metrics") if isinstance(record.get("metrics"), dict) else {}
        record["metrics"] = {**previous, **record_metrics(columns, judged, label, i)}
        out.append(record)
    return out


def summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The mean of each single-valued field over the records that have a value, and how many lack one."""
    result: dict[str, Any] = {"n_records": len(records)}
    for name in METRIC_FIELDS:
        if name in PER_PASSAGE_FIELDS:
            continue
        values = [r["metrics"].get(name, [None])[0] for r in records]
        present = [v for v in values if v is not None]
        result[f"avg_{name}"] = sum(present) / len(present) if present else None
        if len(present) < len(values):
            result[f"missing_{name}"] = len(values) - len(present)
    return result
