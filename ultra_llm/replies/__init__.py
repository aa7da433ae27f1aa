"""Replies of an LLM: what one is declared to be (``Reply``), its JSON schema's builders, and finding JSON in it.

- ``shape``: ``Reply``, a prompt's reply declared once (schema, label values); the ``response_format``,
  the repair text and the default reader come from it;
- ``schema``: the JSON schema builders (``obj``, ``text``, ``choice``, ``array``) and ``response_format``;
- ``json_text``: ``last_json``, the JSON value in a reply's text, or ``Unreadable``.
"""

from ultra_llm.replies.json_text import Unreadable, last_json
from ultra_llm.replies.schema import array, choice, obj, text
from ultra_llm.replies.shape import Labels, Reply, labels

__all__ = ["Labels", "Reply", "Unreadable", "array", "choice", "labels", "last_json", "obj", "text"]
