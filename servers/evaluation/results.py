"""What the evaluation tools share: the result they return, the save_path setting, item ids, the result file."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from ultra_base.errors import InputError
from ultra_kit.factory import __version__
from ultra_kit.files import atomic_write_json, result_path


class EvaluateResult(TypedDict):
    """``eval_res``: {metric: [per item], "avg_<metric>": mean, ...}; the settings; the file written."""

    eval_res: dict[str, Any]
    settings: dict[str, Any]
    result_path: str


SavePathParam = Annotated[str, Field(description="directory (file <tool>_<timestamp>.json) or file name")]


def save_result(tool: str, save_path: str, eval_res: dict[str, Any], settings: dict[str, Any]) -> str:
    """Write ``eval_res`` with the settings and versions to a new JSON file under ``save_path``; its path."""
    path = result_path(save_path, tool)
    atomic_write_json(path, {**eval_res, "settings": settings, "versions": {"ultra-eval": __version__}})
    return str(path)


def answered_items(pred_ls: list[Any], **aligned: list[Any] | None) -> tuple[list[Any], dict[str, Any], list[Any]]:
    """The items a system answered: ``pred_ls`` without its None entries (items the target failed to answer,
    never scored), the ``aligned`` lists cut the same way, and the ids (or positions) of the items left out."""
    if not isinstance(pred_ls, list) or all(p is not None for p in pred_ls):
        return pred_ls, aligned, []
    kept = [i for i, p in enumerate(pred_ls) if p is not None]
    ids = aligned.get("id_ls")
    failed = [ids[i] if isinstance(ids, list) and i < len(ids) else i for i, p in enumerate(pred_ls) if p is None]
    cut = {name: [values[i] for i in kept] if isinstance(values, list) and len(values) == len(pred_ls) else values
           for name, values in aligned.items()}  # fmt: skip
    return [pred_ls[i] for i in kept], cut, failed


def item_ids(id_ls: list[Any] | None, count: int) -> list[Any]:
    """The items' ids: ``id_ls`` (one per prediction, kept as given) or the positions 0..count-1."""
    if id_ls is None:
        return list(range(count))
    if not isinstance(id_ls, list) or len(id_ls) != count:
        size = len(id_ls) if isinstance(id_ls, list) else type(id_ls).__name__
        raise InputError(f"id_ls has {size} ids but pred_ls has {count} predictions; give one id per item")
    return list(id_ls)
