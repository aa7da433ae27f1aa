"""``ultra run --estimate``: the target is not asked; each request it would get is written to the estimate's
ledger (``ultra_llm.estimate``) under the model ``target:<kind>``, so the run's estimate counts them, and the
step gets a placeholder answer so that the steps after it are estimated too."""

from __future__ import annotations

import hashlib

from servers.target.kinds.base import TargetReply, TurnRequest

PLACEHOLDER = "(not asked: ultra run --estimate)"


class EstimateAsker:
    """Stands in for the target in estimate mode."""

    def __init__(self, kind: str, run_key: str) -> None:
        self.model = f"target:{kind}"
        self.run_key = run_key

    async def ask(self, request: TurnRequest) -> TargetReply:
        from ultra_llm.estimate import note_standin, record_unsent

        key = hashlib.sha256(f"{self.run_key}\0{request.id}".encode()).hexdigest()
        messages = [*request.history, {"role": "user", "content": request.question}]
        note_standin()
        record_unsent(key, model=self.model, prompt="target", messages=messages, sampling={}, cache=None,
                      tokens=None, standin="placeholder")  # fmt: skip
        return TargetReply(PLACEHOLDER)

    async def aclose(self) -> None:
        return None
