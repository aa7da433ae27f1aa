"""Reading a reply: JSON within the size and depth limits, then the answer, passages and citations where the
configuration's JMESPath expressions (the ``jmespath`` library) point. Shared by the http, openai and mcp kinds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from servers.target import fastjson
from servers.target.kinds.base import Passage, TargetCallError, TargetReply
from ultra_base.errors import InputError

PATH_KEYS = ("answer", "contexts", "context_text", "context_id", "context_score", "citations")


def load_json(data: bytes | str, *, max_bytes: int, max_depth: int) -> Any:
    """The JSON document ``data``; too large, unreadable or nested deeper than ``max_depth``: ``unreadable``.

    orjson reads it (``fastjson``); what orjson refuses is read as before: the depth found from the text
    first (a deep document never reaches ``json``), then ``json.loads``."""
    size = len(data.encode() if isinstance(data, str) else data)
    if size > max_bytes:
        raise TargetCallError("unreadable", f"the reply is {size} bytes, more than max_response_bytes {max_bytes}")
    document, depth = fastjson.loads(data, max_depth)
    if depth < 0:
        if _depth_of_text(data) > max_depth:
            depth = max_depth + 1
        else:
            try:
                return json.loads(data)
            except (ValueError, RecursionError) as exc:
                raise TargetCallError("unreadable", f"the reply is not JSON ({str(exc)[:120]})") from None
    if depth > max_depth:
        raise TargetCallError("unreadable", f"the reply is nested deeper than max_json_depth {max_depth}")
    return document


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string literal (its escapes included)
_BRACKET = re.compile(r"[\[\]{}]")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _depth_of_text(data: bytes | str) -> int:
    """The deepest nesting of brackets outside strings, found before parsing (a deep document never reaches json).

    Strings are cut out and the brackets left counted by regular expressions and ``accumulate`` (C speed: a
    20 KB reply costs microseconds, where a loop over its characters cost a millisecond)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    brackets = _BRACKET.findall(_STRING.sub("", text))
    return max(0, max(accumulate(map(_STEP.__getitem__, brackets)), default=0))


def usage_of(document: Any) -> dict[str, int] | None:
    """Token counts from a top-level ``usage`` mapping (the OpenAI convention), when the reply has one."""
    usage = document.get("usage") if isinstance(document, dict) else None
    if not isinstance(usage, dict):
        return None
    counts = {str(k): int(v) for k, v in usage.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return counts or None


class FieldFirst:
    """A compiled JMESPath expression; one that names a single field (``answer``, ``text``) is read with
    ``dict.get``, as jmespath reads it, without building its interpreter on every call (10 passages a reply)."""

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled
        self.expression = compiled.expression
        parsed = compiled.parsed
        self.field = parsed["value"] if parsed.get("type") == "field" else None

    def search(self, value: Any) -> Any:
        if self.field is None:
            return self.compiled.search(value)
        return value.get(self.field) if isinstance(value, dict) else None


@dataclass(frozen=True)
class ReplyPaths:
    """The compiled JMESPath expressions of a target (None where the setting is '')."""

    answer: Any
    contexts: Any
    context_text: Any
    context_id: Any
    context_score: Any
    citations: Any

    def __post_init__(self) -> None:
        # The field names of context_text, context_id and context_score ('' where unset) when each is one field
        # or unset (the usual {text, id, score} passages, read with dict.get); None when one is a longer expression.
        paths = (self.context_text, self.context_id, self.context_score)
        simple = all(path is None or path.field is not None for path in paths)
        fields = tuple(path.field if path is not None else "" for path in paths) if simple else None
        object.__setattr__(self, "_fields", fields)

    @classmethod
    def of(cls, target: Mapping[str, Any], *, answer_required: bool = True) -> ReplyPaths:
        """Compile ``target``'s path keys; a bad expression is an InputError naming the key."""
        import jmespath
        from jmespath.exceptions import JMESPathError

        compiled: dict[str, Any] = {}
        for key in PATH_KEYS:
            text = target.get(key) or ""
            if not isinstance(text, str):
                raise InputError(f"target.{key} must be a JMESPath expression (a string), got {type(text).__name__}")
            if key == "answer" and not text and answer_required:
                raise InputError("target.answer is empty; give the JMESPath of the answer in the reply (e.g. answer)")
            try:
                compiled[key] = FieldFirst(jmespath.compile(text)) if text else None
            except JMESPathError as exc:
                raise InputError(f"target.{key} is not a JMESPath expression: {text!r} ({exc})") from None
        return cls(**compiled)

    def reply(self, document: Any, *, answer: str | None = None, usage: Mapping[str, int] | None = None) -> TargetReply:
        """The reply in ``document``; ``answer`` when the caller read it already (a stream).

        No answer where ``answer`` points (or one that is not text) is ``missing_answer``."""
        if answer is None:
            found = self.answer.search(document) if self.answer is not None else None
            if isinstance(found, (int, float)) and not isinstance(found, bool):
                found = str(found)
            if not isinstance(found, str):
                what = "nothing" if found is None else f"a {type(found).__name__}"
                shown = self.answer.expression if self.answer is not None else ""
                raise TargetCallError("missing_answer", f"target.answer {shown!r} found {what} in the reply")
            answer = found
        if usage is None:
            usage = usage_of(document)
        return TargetReply(answer, self.passages(document), self.citation_list(document), usage)

    def passages(self, document: Any) -> tuple[Passage, ...]:
        """The passages ``contexts`` selects, each read with the ``context_*`` expressions."""
        if self.contexts is None:
            return ()
        found = self.contexts.search(document)
        if found is None:
            return ()
        if not isinstance(found, list):
            found = [found]
        return tuple(self._passage(element) for element in found)

    def _passage(self, element: Any) -> Passage:
        fields = self._fields  # type: ignore[attr-defined]
        if fields is not None and isinstance(element, dict):  # the usual {text, id, score}: read with dict.get
            return _passage(*_parts(element, *fields))
        return _passage(*self._passage_parts(element))

    def _passage_parts(self, element: Any) -> tuple[Any, Any, Any]:
        text = self.context_text.search(element) if self.context_text is not None else element
        if text is None and isinstance(element, str):
            text = element
        ident = self.context_id.search(element) if self.context_id is not None and isinstance(element, dict) else None
        score = (
            self.context_score.search(element) if self.context_score is not None and isinstance(element, dict) else None
        )
        return text, ident, score

    def citation_list(self, document: Any) -> tuple[Any, ...]:
        """The citations ``citations`` selects (a list, or one value)."""
        if self.citations is None:
            return ()
        found = self.citations.search(document)
        return () if found is None else tuple(found) if isinstance(found, list) else (found,)


def _parts(element: dict, text_key: str, id_key: str, score_key: str) -> tuple[Any, Any, Any]:
    """The text, id and score of a passage whose ``context_*`` expressions are single fields ('' = unset)."""
    get = element.get
    return (get(text_key) if text_key else element, get(id_key) if id_key else None,
            get(score_key) if score_key else None)  # fmt: skip


def _passage(text: Any, ident: Any, score: Any) -> Passage:
    return Passage(
        text if isinstance(text, str) else "" if text is None else json.dumps(text, ensure_ascii=False),
        None if ident is None else str(ident),
        float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
    )
