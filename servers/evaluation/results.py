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


def item_ids(id_ls: list[Any] | None, count: int) -> list[Any]:
    """The items' ids: ``id_ls`` (one per prediction, kept as given) or the positions 0..count-1."""
    if id_ls is None:
        return list(range(count))
    if not isinstance(id_ls, list) or len(id_ls) != count:
        size = len(id_ls) if isinstance(id_ls, list) else type(id_ls).__name__
        raise InputError(f"id_ls has {size} ids but pred_ls has {count} predictions; give one id per item")
    return list(id_ls)
