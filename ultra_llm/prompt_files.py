"""Prompt files: versioned chat prompts in a server's ``prompts/`` folder, each use recorded by name and hash.

A prompt file holds sections introduced by ``=== system ===``, ``=== user ===`` or ``=== assistant ===``
lines; the placeholders ``{name}`` are filled in one pass, so text inside a filled value is never
expanded again, and every placeholder must be given a value. Keep the fixed instructions first and
the item last, so providers' prompt caching helps. The judge and synth servers load theirs from
their own folder (``load_prompt(folder, name)``).
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError

_SECTION = re.compile(r"^=== (system|user|assistant) ===\s*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt file: its messages with placeholders, its name and the SHA-256 of its text."""

    name: str
    sha256: str
    sections: tuple[tuple[str, str], ...]

    @property
    def version(self) -> str:
        """The name and a short hash: what goes into cache keys and results."""
        return f"{self.name}@{self.sha256[:12]}"

    @functools.cached_property
    def fields(self) -> frozenset[str]:
        """The placeholders' names (found once: a long prompt costs a scan per render otherwise)."""
        return frozenset(name for _, text in self.sections for name in _PLACEHOLDER.findall(text))

    def render(self, **values: Any) -> list[dict[str, str]]:
        """Chat messages with every ``{placeholder}`` replaced by ``str(values[name])`` (all must be given)."""
        missing = self.fields - set(values)
        if missing:
            raise InputError(f"prompt {self.name} needs values for {sorted(missing)}")

        def fill(match: re.Match[str]) -> str:
            return str(values[match.group(1)])

        return [{"role": role, "content": _PLACEHOLDER.sub(fill, text)} for role, text in self.sections]

    def describe(self) -> dict[str, str]:
        """What a result records about the prompt."""
        return {"name": self.name, "sha256": self.sha256, "version": self.version}


@functools.lru_cache(maxsize=64)
def load_prompt(folder: Path, name: str) -> Prompt:
    """Load ``<folder>/<name>.txt``; a missing or malformed file is an ``InputError`` naming it."""
    path = folder / f"{name}.txt"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.txt"))
        raise InputError(f"no prompt named {name!r}; known prompts: {known}", path=str(path))
    return parse_prompt(name, path.read_text(encoding="utf-8"), path)


def parse_prompt(name: str, text: str, path: Path | str) -> Prompt:
    """The prompt ``name`` written in ``text`` (read from ``path``, named in errors): sections and hash."""
    parts = _SECTION.split(text)
    if parts[0].strip():
        raise InputError(
            "a prompt file must start with a '=== system ===' or '=== user ===' line", path=str(path), line=1
        )
    sections = tuple((role, body.strip("\n")) for role, body in zip(parts[1::2], parts[2::2], strict=True))
    if not sections:
        raise InputError("the prompt file has no sections", path=str(path))
    return Prompt(name, hashlib.sha256(text.encode("utf-8")).hexdigest(), sections)
