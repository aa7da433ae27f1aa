"""What the kinds of result file share: reading a mapping of ids, and spotting a shape."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ultra_base.errors import InputError

if TYPE_CHECKING:
    from servers.report.model import Run

TIMESTAMP = re.compile(r"_\d{8}_\d{6}(_\d+)?$")


def tool_of(document: Any) -> str:
    """The ``tool`` a result file names, or ""."""
    return str(document.get("tool", "")) if isinstance(document, dict) else ""


def mapping(document: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    """``document[key]``, which must map ids to objects of values."""
    value = document.get(key)
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise InputError(f"'{key}' must map ids to objects of values", path=path)
    return value


def is_table(document: Any) -> bool:
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(r, dict) and "qid" in r and "run" in r for r in document)
    )


def has(*keys: str) -> Callable[[Any], bool]:
    return lambda document: isinstance(document, dict) and all(k in document for k in keys)


def answer_lists(document: Any) -> bool:
    if not isinstance(document, dict) or tool_of(document):
        return False
    settings = document.get("settings")
    named = isinstance(settings, dict) and ("metrics" in settings or "mtrag_metrics" in settings)
    return named or isinstance(document.get("id_ls"), list)


def declared(run: Run, document: Any) -> None:
    """What a result file recorded of its metrics from the tool's registry: ``metric_kinds`` (the chart) and
    ``higher_is_better`` (compare's better and worse; a metric it does not name is higher-is-better); a
    ``count`` (``num_ret``) is never compared nor charted as a metric."""
    kinds, directions = (
        document.get(k) if isinstance(document, dict) else None for k in ("metric_kinds", "higher_is_better")
    )
    run.kinds.update({str(k): str(v) for k, v in kinds.items()} if isinstance(kinds, dict) else {})
    run.lower_is_better.update(
        str(k) for k, up in (directions if isinstance(directions, dict) else {}).items() if up is False
    )
