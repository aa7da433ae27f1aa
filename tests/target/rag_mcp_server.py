"""A tiny RAG system behind an MCP tool, served over stdio: the ``mcp`` kind's target in the tests.

``python tests/target/rag_mcp_server.py`` serves tools ``answer`` (structured: answer and passages),
``plain`` (a text answer), ``refuse`` (a tool error), ``crash`` (the process dies) and ``environment`` (what
of its environment it sees: ``RAG_INDEX`` as its reply, ``RAG_TOKEN`` hashed, never echoed).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from typing_extensions import TypedDict

PASSAGES = [
    {"text": "Paris is the capital of France.", "doc": "d1"},
    {"text": "Berlin is the capital of Germany.", "doc": "d2"},
    {"text": "Rome is the capital of Italy.", "doc": "d3"},
]
app = MCPServer("tiny-rag")


class Hit(TypedDict):
    content: str
    doc: str
    relevance: float


class Answer(TypedDict):
    reply: str
    hits: list[Hit]
    asked: dict[str, Any]


def _ranked(question: str) -> list[dict]:
    words = set(question.lower().replace("?", "").split())
    scored = [(len(words & set(p["text"].lower().rstrip(".").split())), p) for p in PASSAGES]
    return [dict(p, score=float(s)) for s, p in sorted(scored, key=lambda pair: -pair[0])]


@app.tool()
def answer(question: str, top_k: int, history: str = "[]") -> Answer:
    """Answer from the best passages; echoes what it was asked."""
    hits = _ranked(question)[:top_k]
    return {
        "reply": f"From {hits[0]['doc']}: {hits[0]['text']}",
        "hits": [{"content": h["text"], "doc": h["doc"], "relevance": h["score"]} for h in hits],
        "asked": {"question": question, "top_k": top_k, "history": history, "pid": os.getpid()},
    }


@app.tool()
def plain(question: str) -> str:
    """A text answer without structure."""
    return f"plainly: {question}"


@app.tool()
def refuse(question: str) -> str:
    """Always fails."""
    raise ToolError(f"no index for {question!r}")


@app.tool()
def crash(question: str) -> str:
    """The process dies mid-call."""
    os._exit(3)


@app.tool()
def environment(question: str) -> dict[str, Any]:
    """RAG_INDEX as the reply, a hash of RAG_TOKEN, and the names of the variables it inherited."""
    token = os.environ.get("RAG_TOKEN")
    return {"reply": os.environ.get("RAG_INDEX"), "token_sha256": token and hashlib.sha256(token.encode()).hexdigest(),
            "names": sorted(os.environ)}  # fmt: skip


if __name__ == "__main__":
    app.run()
