"""The ``openai`` kind: an OpenAI-compatible chat endpoint that is itself the RAG system (it retrieves on its
own), asked with the conversation as chat messages; the passages are read from a response field when it
returns them (``contexts``, a JMESPath such as ``choices[0].message.context.citations``).

The request goes to ``<base_url>/chat/completions`` with ``model_id``, an optional ``system`` message, the
history and the question; ``api_key`` is sent as a bearer token to that host only (the http kind's rules:
redirects elsewhere drop it, size and depth limits apply).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from servers.target import fastjson
from servers.target.kinds.base import KindContext, TurnRequest
from servers.target.kinds.http import HttpAsker
from ultra_base.errors import InputError

KEYS = ("base_url", "model_id", "api_key", "system", "contexts", "context_text", "context_id", "context_score",
        "citations")  # fmt: skip
SUMMARY = "an OpenAI-compatible chat endpoint that retrieves on its own; passages from a field of its response"
ANSWER = "choices[0].message.content"


def open_asker(target: Mapping[str, Any], context: KindContext) -> ChatAsker:
    """An asker for ``target``'s chat endpoint."""
    base_url = target.get("base_url")
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise InputError(
            f"target.base_url must be an http:// or https:// address (e.g. http://127.0.0.1:8000/v1), got {base_url!r}"
        )
    if not target.get("model_id"):
        raise InputError("target.model_id is empty; give the model (or deployment) name the endpoint expects")
    headers = {"Authorization": f"Bearer {target['api_key']}"} if target.get("api_key") else {}
    http = {**target, "url": base_url.rstrip("/") + "/chat/completions", "method": "POST", "headers": headers,
            "body": None, "answer": ANSWER, "stream": False}  # fmt: skip
    return ChatAsker(http, context, model=str(target["model_id"]), system=str(target.get("system") or ""))


class ChatAsker(HttpAsker):
    """The http asker with a chat request for a body."""

    def __init__(self, target: Mapping[str, Any], context: KindContext, *, model: str, system: str) -> None:
        super().__init__(target, context)
        self.model, self.system = model, system
        self._chat_headers = {**self.headers, "Content-Type": "application/json"}

    def _payload(self, request: TurnRequest) -> tuple[dict[str, Any], dict[str, str]]:
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages += [{"role": t["role"], "content": t["content"]} for t in request.history]
        messages.append({"role": "user", "content": request.question})
        body = {"model": self.model, "messages": messages, **dict(request.settings)}
        return {"data": fastjson.dumps(body)}, self._chat_headers
