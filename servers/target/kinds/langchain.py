"""The ``langchain`` kind: a LangChain Runnable (``runnable: module:attribute``) asked each question.

The input is ``{input_key: question, "chat_history": [(role, content), ...]}`` (or the bare question when
``input_key`` is ''); the target's ``settings`` go in as ``config["configurable"]``. The answer is
``output[answer_key]`` (or the whole output), a string or a message; the passages are the Documents at
``output[context_key]``: ``page_content`` is the text, a metadata id (``id``, ``doc_id``, ...) or the
Document's own id the id, a metadata ``score`` the score. ``ainvoke`` is used (LangChain runs a sync-only
chain's ``invoke`` in a thread). Needs the ``langchain`` extra (``langchain-core``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from servers.target.kinds.base import Asker, KindContext, Passage, TargetCallError, TargetReply, TurnRequest
from servers.target.kinds.from_code import code_raised, metadata_id, metadata_score
from servers.target.kinds.loading import load_attribute
from ultra_base.errors import InputError, require

HISTORY_KEY = "chat_history"  # LangChain's usual name (MessagesPlaceholder("chat_history"))
KEYS = ("runnable", "input_key", "answer_key", "context_key")
SUMMARY = "a Runnable (`module:attribute`): `ainvoke({input_key: question, chat_history})`, Documents as passages"


def open_asker(target: Mapping[str, Any], context: KindContext) -> Asker:
    """An asker over the Runnable ``target["runnable"]`` names, imported from the read roots."""
    require("langchain_core", extra="langchain")
    runnable = load_attribute(target.get("runnable"), setting="target.runnable", roots=context.read_roots)
    if not callable(getattr(runnable, "ainvoke", None)):
        raise InputError(
            f"target.runnable {target.get('runnable')!r} is a {type(runnable).__name__}, not a LangChain Runnable "
            "(no ainvoke); wrap a plain function with RunnableLambda, or use kind: python"
        )
    keys = {name: _key(target, name) for name in ("input_key", "answer_key", "context_key")}
    return RunnableAsker(runnable, **keys)


def _key(target: Mapping[str, Any], name: str) -> str | None:
    """The key ``target[name]`` names; '' or null: none (the bare question in, the whole output as answer)."""
    value = target.get(name)
    if value is not None and not isinstance(value, str):
        raise InputError(f"target.{name} must be a key name (a string), or '' for none; got {value!r}")
    return value.strip() or None if value else None


class RunnableAsker:
    """Asks a Runnable one turn at a time; a Runnable is stateless, so turns run concurrently."""

    def __init__(self, runnable: Any, *, input_key: str | None, answer_key: str | None, context_key: str | None):
        self.runnable = runnable
        self.input_key = input_key
        self.answer_key = answer_key
        self.context_key = context_key

    async def ask(self, request: TurnRequest) -> TargetReply:
        """The Runnable's output for ``request``, read as answer and passages."""
        chain_input: Any = request.question
        if self.input_key is not None:
            history = [(turn["role"], turn["content"]) for turn in request.history]
            chain_input = {self.input_key: request.question, HISTORY_KEY: history}
        config = {"configurable": dict(request.settings)} if request.settings else None
        try:
            output = await self.runnable.ainvoke(chain_input, config=config)
        except Exception as exc:  # the user's chain failed: recorded on the item, never fatal to the run
            raise code_raised(exc) from exc
        return read_output(output, answer_key=self.answer_key, context_key=self.context_key)

    async def aclose(self) -> None:
        """Nothing to close: a Runnable holds no connection of ours."""


def read_output(output: Any, *, answer_key: str | None, context_key: str | None) -> TargetReply:
    """A Runnable's output as a reply: the answer at ``answer_key`` and the Documents at ``context_key``."""
    if (answer_key is not None or context_key is not None) and not isinstance(output, Mapping):
        raise TargetCallError("missing_answer", f"the runnable returned a {type(output).__name__}, not a mapping")
    answer_value = output.get(answer_key) if answer_key is not None else output
    answer = _text(answer_value)
    if answer is None:
        where = f"output[{answer_key!r}]" if answer_key is not None else "the output"
        keys = f" (its keys: {sorted(map(str, output))})" if isinstance(output, Mapping) else ""
        raise TargetCallError("missing_answer", f"{where} is not a string or a message{keys}")
    documents = output.get(context_key) if context_key is not None else None
    return TargetReply(answer=answer, contexts=_passages(documents), usage=_usage(answer_value))


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    content = getattr(value, "content", None)  # an AIMessage
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: the text ones joined
        blocks = [b if isinstance(b, str) else b.get("text", "") for b in content if isinstance(b, (str, dict))]
        return "".join(str(block) for block in blocks)
    return None


def _passages(documents: Any) -> tuple[Passage, ...]:
    if documents is None:
        return ()
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
        raise TargetCallError("unreadable", f"the context is a {type(documents).__name__}, not a list of Documents")
    passages = []
    for document in documents:
        if isinstance(document, str):
            passages.append(Passage(text=document))
            continue
        text = getattr(document, "page_content", None)
        if not isinstance(text, str):
            raise TargetCallError("unreadable", f"a context item is a {type(document).__name__}, not a Document")
        metadata = getattr(document, "metadata", None)
        own_id = getattr(document, "id", None)
        passages.append(Passage(text=text, id=metadata_id(metadata, own_id), score=metadata_score(metadata)))
    return tuple(passages)


def _usage(answer: Any) -> Mapping[str, int] | None:
    usage = getattr(answer, "usage_metadata", None)  # an AIMessage's token counts, when the model gave them
    if not isinstance(usage, Mapping):
        return None
    return {"prompt_tokens": int(usage.get("input_tokens", 0)), "completion_tokens": int(usage.get("output_tokens", 0))}
