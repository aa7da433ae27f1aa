"""The ``python`` kind: a function of your own, sync or async, called with ``{question, id, history, settings}``.

It returns the answer as a string, or a mapping ``{answer, contexts, citations, usage}`` whose ``contexts``
are strings or ``{text, id, score}`` mappings. It is imported only from the read roots (``loading``). A sync
function runs in a worker thread, so ``max_workers`` calls run at once; what it raises is ``target_error``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Mapping
from typing import Any

from servers.target.kinds.base import KindContext, Passage, TargetCallError, TargetReply, TurnRequest
from servers.target.kinds.loading import load_attribute
from ultra_base.errors import InputError

KEYS = ("function",)
SUMMARY = "`module:function` or `file.py:function`, sync or async: `{question, id, history}` -> text or `{answer, ...}`"


def open_asker(target: Mapping[str, Any], context: KindContext) -> FunctionAsker:
    """An asker calling ``target.function``, imported now (from the read roots only)."""
    function = load_attribute(target.get("function"), setting="target.function", roots=context.read_roots)
    if not callable(function):
        raise InputError(f"target.function {target.get('function')!r} is not callable")
    return FunctionAsker(function)


class FunctionAsker:
    def __init__(self, function: Any) -> None:
        self.function = function
        self.is_async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
            getattr(function, "__call__", None)  # noqa: B004 - an object with an async __call__
        )

    async def ask(self, request: TurnRequest) -> TargetReply:
        argument = {
            "question": request.question,
            "id": request.id,
            "history": [dict(turn) for turn in request.history],
            "settings": dict(request.settings),
        }
        try:
            if self.is_async:
                result = await self.function(argument)
            else:
                result = await asyncio.to_thread(functools.partial(self.function, argument))
        except TargetCallError:
            raise
        except Exception as exc:  # noqa: BLE001 - the system's own failure, recorded per item
            raise TargetCallError("target_error", f"{type(exc).__name__}: {str(exc)[:300]}") from None
        return reply_from_value(result)

    async def aclose(self) -> None:
        return None


def reply_from_value(value: Any) -> TargetReply:
    """A function's (or chain's) return value as a reply: a string, or a mapping with ``answer``."""
    if isinstance(value, str):
        return TargetReply(value)
    if not isinstance(value, Mapping):
        raise TargetCallError(
            "missing_answer", f"the function returned a {type(value).__name__}, not text or a mapping"
        )
    answer = value.get("answer")
    if not isinstance(answer, str):
        raise TargetCallError("missing_answer", "the mapping the function returned has no text under 'answer'")
    contexts = value.get("contexts") or []
    if not isinstance(contexts, (list, tuple)):
        raise TargetCallError("unreadable", "'contexts' must be a list of strings or {text, id, score} mappings")
    citations = value.get("citations") or []
    usage = value.get("usage")
    return TargetReply(
        answer,
        tuple(_passage(item) for item in contexts),
        tuple(citations) if isinstance(citations, (list, tuple)) else (citations,),
        dict(usage) if isinstance(usage, Mapping) else None,
    )


def _passage(item: Any) -> Passage:
    if isinstance(item, str):
        return Passage(item)
    if isinstance(item, Mapping) and isinstance(item.get("text"), str):
        ident, score = item.get("id"), item.get("score")
        return Passage(
            item["text"],
            None if ident is None else str(ident),
            float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
        )
    raise TargetCallError("unreadable", "a passage must be a string or a mapping with 'text'")
