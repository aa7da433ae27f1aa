"""A record's reference answer in IBM's MT-RAG layout: the text of its first target (IBM's ``extract_reference``).

``targets`` is ``[{"text": ...}, ...]`` in MT-RAG's files; plain text and a list of texts are read too, as other
benchmarks map their gold answers into ``gt_ls``.
"""

from __future__ import annotations

from ultra_base.errors import InputError

_SHOWN = 80  # characters of a wrong value an error message quotes


def first_reference(value: object, index: int) -> str | None:
    """The reference answer of item ``index``'s ``gt_ls`` value: the text itself, the first text of a list, or the
    ``text`` of the first target; None when there is none (None or an empty list). Anything else is an InputError
    naming the item."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value:
        first = value[0]
        if isinstance(first, str):
            return first
        if isinstance(first, dict) and isinstance(first.get("text"), str):
            return first["text"]
    if value is None or value == []:
        return None
    shown = repr(value)
    shown = shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "..."
    raise InputError(
        f"gt_ls[{index}]: expected a reference answer: text, a list of texts or MT-RAG targets ([{{text}}, ...]); "
        f"found {shown}"
    )
