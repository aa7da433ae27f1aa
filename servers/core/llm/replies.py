"""What one request returned (``Reply``) and what a tool call cost (``Usage``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal


@dataclass
class Reply:
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


@dataclass
class Usage:
    """Tokens and requests of one tool call; cached answers cost nothing now."""

    requests: int = 0
    cache_hits: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0

    def add(self, reply: Reply) -> None:
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

    def as_dict(self) -> dict[str, int]:
        data = asdict(self)
        data["total_tokens"] = self.prompt_tokens + self.completion_tokens
        return data
