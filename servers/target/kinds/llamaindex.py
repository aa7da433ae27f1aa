"""The ``llamaindex`` kind: a LlamaIndex query engine or chat engine (``engine: module:attribute``).

A query engine gets the question (``aquery``) and nothing of the conversation's earlier turns: it has no place
for them, so a conversation's turns are asked as if each stood alone, and the first turn that had a history
prints a warning saying so (once per step). A chat engine gets the question and the earlier turns as
``chat_history`` (``achat``); ``CondenseQuestionChatEngine.from_defaults(query_engine=...)`` makes one of a
query engine. A chat engine keeps a memory that each call replaces, so
calls to one are made one at a time; a query engine is asked concurrently. The answer is
``response.response``; ``response.source_nodes`` become the passages: the node's text, its id (a metadata
id such as ``doc_id``, else the id of the document it came from, else the node's own id) and its score.
Needs the ``llamaindex`` extra (``llama-index-core``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from typing import Any

from servers.target.kinds.base import Asker, KindContext, Passage, TargetCallError, TargetReply, TurnRequest
from servers.target.kinds.from_code import code_raised, metadata_id
from servers.target.kinds.loading import load_attribute
from ultra_base.errors import InputError, require

KEYS = ("engine",)
SUMMARY = "a query engine (`aquery`) or chat engine (`achat` with the history); `source_nodes` as passages"


def open_asker(target: Mapping[str, Any], context: KindContext) -> Asker:
    """An asker over the engine ``target["engine"]`` names, imported from the read roots."""
    require("llama_index.core", extra="llamaindex")
    engine = load_attribute(target.get("engine"), setting="target.engine", roots=context.read_roots)
    if callable(getattr(engine, "achat", None)):
        return ChatEngineAsker(engine)
    if callable(getattr(engine, "aquery", None)):
        return QueryEngineAsker(engine)
    raise InputError(
        f"target.engine {target.get('engine')!r} is a {type(engine).__name__}, neither a query engine (aquery) "
        "nor a chat engine (achat); use index.as_query_engine() or index.as_chat_engine()"
    )


HISTORY_DROPPED = (
    "[ultra] warning: target.engine is a query engine, which takes a question only: the earlier turns of each "
    "conversation are not sent, so every turn is asked as if it stood alone. To send them, give a chat engine "
    "(index.as_chat_engine(chat_mode='context'), or CondenseQuestionChatEngine.from_defaults(query_engine=...))"
)


class QueryEngineAsker:
    """Asks a query engine; the history of a conversation is not sent (a query engine has none), said once."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.warned = False

    async def ask(self, request: TurnRequest) -> TargetReply:
        """The engine's response to the question."""
        if request.history and not self.warned:
            self.warned = True
            print(HISTORY_DROPPED, file=sys.stderr)
        try:
            response = await self.engine.aquery(request.question)
        except Exception as exc:  # the user's engine failed: recorded on the item
            raise code_raised(exc) from exc
        return read_response(response)

    async def aclose(self) -> None:
        """Nothing to close."""


class ChatEngineAsker:
    """Asks a chat engine with the conversation's history, one call at a time (the engine's memory is shared)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.turn = asyncio.Lock()

    async def ask(self, request: TurnRequest) -> TargetReply:
        """The engine's reply to the question after the earlier turns."""
        from llama_index.core.llms import ChatMessage

        history = [ChatMessage(role=turn["role"], content=turn["content"]) for turn in request.history]
        async with self.turn:
            try:
                response = await self.engine.achat(request.question, chat_history=history)
            except Exception as exc:
                raise code_raised(exc) from exc
        return read_response(response)

    async def aclose(self) -> None:
        """Nothing to close."""


def read_response(response: Any) -> TargetReply:
    """A LlamaIndex response (``Response``, ``AgentChatResponse``) as a reply: its text and source nodes."""
    answer = getattr(response, "response", None)
    if not isinstance(answer, str):
        if answer is None and hasattr(response, "response_gen"):
            raise TargetCallError("unreadable", "the engine streams; build it with streaming=False")
        raise TargetCallError("missing_answer", f"the engine's {type(response).__name__} has no text response")
    passages = []
    for scored in getattr(response, "source_nodes", None) or ():
        node = getattr(scored, "node", scored)
        text = node.get_content() if callable(getattr(node, "get_content", None)) else getattr(node, "text", None)
        if not isinstance(text, str):
            raise TargetCallError("unreadable", f"a source node is a {type(node).__name__} without text")
        fallback = getattr(node, "ref_doc_id", None) or getattr(node, "node_id", None)
        score = getattr(scored, "score", None)
        passages.append(
            Passage(
                text=text,
                id=metadata_id(getattr(node, "metadata", None), fallback),
                score=float(score) if isinstance(score, (int, float)) else None,
            )
        )
    return TargetReply(answer=answer, contexts=tuple(passages))
