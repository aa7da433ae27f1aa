"""What one request returned (``Completion``), how a chat completion reads as one, and what a call cost (``Usage``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal


@dataclass
class Completion:
    """The outcome of one chat or embeddings request."""

    status: Literal["ok", "error"]
    text: str = ""
    reasoning: str | None = None
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    attempts: int = 0
    vectors: list[list[float]] | None = None
    logprobs: list[dict[str, Any]] | None = None  # per token of the reply: token, logprob, top_logprobs (if asked)
    standin: str | None = None  # ultra run --estimate: "same", "like" or "placeholder" in place of an unsent request's


class MalformedCompletion(ValueError):
    """A response that holds no chat answer; the message says what is missing."""


def completion_from_response(response: Any) -> Completion:
    """The ``Completion`` of a chat.completion object (online, in a batch output line or an imported file)."""
    if not isinstance(response, dict):
        raise MalformedCompletion(f"malformed reply: expected a JSON object, got {type(response).__name__}")
    try:
        message = response["choices"][0]["message"]
        text = message.get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise MalformedCompletion("malformed reply: no choices[0].message in the response") from None
    if not isinstance(text, str):
        raise MalformedCompletion("malformed reply: message content is not text")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    usage = response.get("usage") or {}
    return Completion(
        "ok",
        text,
        reasoning if isinstance(reasoning, str) else None,
        prompt_tokens=token_count(usage, "prompt_tokens"),
        completion_tokens=token_count(usage, "completion_tokens"),
        logprobs=token_logprobs(response["choices"][0]),
    )


def token_logprobs(choice: Any) -> list[dict[str, Any]] | None:
    """``choices[0].logprobs.content`` (OpenAI's shape: token, logprob, top_logprobs), or None when absent."""
    content = (choice.get("logprobs") or {}).get("content") if isinstance(choice, dict) else None
    if not isinstance(content, list) or not all(
        isinstance(t, dict) and isinstance(t.get("token"), str) for t in content
    ):
        return None
    return content


def token_count(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return int(value) if isinstance(value, (int, float)) else 0


ENDPOINT_COUNTS = ("requests", "ok", "failed", "drained")


@dataclass
class Usage:
    """Tokens and requests of one tool call; cached answers cost nothing now.

    ``endpoints`` holds per-endpoint counts (requests sent, ok, failed, times drained), keyed by
    ``host:port`` of each endpoint (never its key or path).
    """

    requests: int = 0
    cache_hits: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    endpoints: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, reply: Completion) -> None:
        self.requests += reply.attempts
        if reply.status != "ok":
            self.errors += 1
        elif reply.cached:
            self.cache_hits += 1
            self.cached_prompt_tokens += reply.prompt_tokens
            self.cached_completion_tokens += reply.completion_tokens
        else:
            self.prompt_tokens += reply.prompt_tokens
            self.completion_tokens += reply.completion_tokens

    def count(self, endpoint: str, what: str, n: int = 1) -> None:
        """Add ``n`` to one per-endpoint counter (``ENDPOINT_COUNTS``)."""
        counts = self.endpoints.get(endpoint)
        if counts is None:
            counts = self.endpoints[endpoint] = dict.fromkeys(ENDPOINT_COUNTS, 0)
        counts[what] += n

    def restart(self) -> None:
        """Zero the request and token counts (a new batch pass counts again); the per-endpoint counts stay."""
        for name in ("requests", "cache_hits", "errors", "prompt_tokens", "completion_tokens"):
            setattr(self, name, 0)
        self.cached_prompt_tokens = self.cached_completion_tokens = 0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.endpoints:
            del data["endpoints"]  # cache hits only, or a local model: nothing to count per endpoint
        data["total_tokens"] = self.prompt_tokens + self.completion_tokens
        return data
