"""Prompt overrides: a user's own version of a built-in judge's prompt, ``prompt_file: {prompt name: file}``.

The file is a prompt file like those in ``prompts/`` (``=== system ===`` / ``=== user ===`` sections),
read inside the read roots. Its contract with the judge is checked (at ``ultra build`` and when the tool
runs): it uses exactly the placeholders the built-in prompt uses (the values the judge fills), and, for a
judge that reads a JSON reply, it names every field of that reply. The override keeps the prompt's name,
so the reply schema and the reader stay the judge's; its hash is recorded in the result and is part of
the cache key (``name@hash``), so answers to the built-in prompt are never taken for the override's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from servers.judge.common.prompting import PROMPT_DIR, Prompt, Prompts
from ultra_base.errors import InputError, closest, existing_file
from ultra_base.file_limits import read_limited_text
from ultra_llm import prompt_files
from ultra_llm.replies import Reply

SETTING = "prompt_file"
OWN_PROMPTS = ("rubric_judge_v1", "rubric_steps_v1")  # rubric_judge's: a rubric is already the user's own


def overridable() -> list[str]:
    """The names of the built-in prompts a ``prompt_file`` may replace."""
    return sorted(p.stem for p in PROMPT_DIR.glob("*.txt") if p.stem not in OWN_PROMPTS)


def replies() -> dict[str, Reply]:
    """Prompt name -> the reply its judge reads (the answer judges' declarations)."""
    from servers.judge.answers.registry import JUDGES

    return {name: reply for judge in JUDGES for name, reply in judge.replies.items()}


def read_override(name: str, path: str, *, setting_file: str | None = None, line: int | None = None) -> Prompt:
    """The override of prompt ``name`` in the file ``path``, its contract checked (see the module docstring)."""
    known = overridable()
    if name not in known:
        near = closest(name, known)
        hint = f" (did you mean {near!r}?)" if near else ""
        raise InputError(f"{SETTING}: no built-in prompt named {name!r}{hint}; the prompts: {known}",
                         path=setting_file, line=line if setting_file else None)  # fmt: skip
    if not isinstance(path, str) or not path.strip():
        raise InputError(f"{SETTING}.{name} must be the path of a prompt file", path=setting_file, line=line)
    file = existing_file(path, what=f"{SETTING} {name}")
    text = read_limited_text(file, "prompt")
    prompt = prompt_files.parse_prompt(name, text, path)
    builtin = prompt_files.load_prompt(PROMPT_DIR, name)
    unknown = sorted(prompt.fields - builtin.fields)
    if unknown:
        raise InputError(
            f"placeholder {{{unknown[0]}}} is not one the judge fills for {name}; its placeholders: "
            f"{_braced(builtin.fields)} (a {{word}} of your own text reads as a placeholder: write it otherwise)",
            path=path, line=_line_of(text, "{" + unknown[0] + "}"),
        )  # fmt: skip
    missing = sorted(builtin.fields - prompt.fields)
    if missing:
        raise InputError(f"the prompt leaves out {_braced(missing)}: the judge fills {_braced(builtin.fields)} "
                         "and each must appear, or the judge would not see that input", path=path)  # fmt: skip
    reply = replies().get(name)
    fields = list((reply.schema or {}).get("properties", {})) if reply is not None and reply.read_with is None else []
    unnamed = [field for field in fields if not re.search(rf"\b{re.escape(field)}\b", text)]
    if unnamed:
        raise InputError(f"the judge reads a JSON reply with the fields {fields}, but the prompt never names "
                         f"{unnamed}: ask for that reply (the judge's own prompt shows how)", path=path)  # fmt: skip
    return prompt


def read_overrides(
    prompt_file: Any, *, names: tuple[str, ...] | None = None, setting_file: str | None = None
) -> dict[str, Prompt]:
    """The overrides ``prompt_file`` gives (only those of ``names``, the calling judge's prompts, when given)."""
    if prompt_file in (None, "", {}):
        return {}
    if not isinstance(prompt_file, Mapping):
        line = getattr(prompt_file, "line", None) if setting_file else None
        example = "{idk_v1: prompts/my_idk.txt}"
        raise InputError(f"{SETTING} must map prompt names to files, e.g. {example}", path=setting_file, line=line)
    found = {}
    for name, path in prompt_file.items():
        line = getattr(name, "line", None) or getattr(prompt_file, "line", None)
        if names is not None and name in overridable() and name not in names:
            continue  # another tool's prompt (the setting is shared by the server's tools)
        found[str(name)] = read_override(str(name), path, setting_file=setting_file, line=line)
    return found


def call_prompts(language: str, prompt_file: Any, *, names: tuple[str, ...] | None) -> Prompts:
    """A tool call's ``Prompts``: the overrides ``prompt_file`` gives of ``names`` (the tool's prompts), in
    ``language``."""
    return Prompts(language, read_overrides(prompt_file, names=names))


def prompts_recorded(prompts: Prompts, prompt_file: Mapping[str, str]) -> dict[str, Any]:
    """What a result records of a call's prompts: its ``language``, and ``prompt_overrides`` (per prompt, the file
    and its sha256) when there are any."""
    found: dict[str, Any] = {"language": prompts.language}
    if prompts.overrides:
        found["prompt_overrides"] = {name: {"path": str(prompt_file[name]), "sha256": p.sha256}
                                     for name, p in prompts.overrides.items()}  # fmt: skip
    return found


def check_prompt_file(value: Any, *, parameter_file: str) -> None:
    """``ultra build``'s check of the ``prompt_file`` setting (``ServerSpec.setting_checks``)."""
    read_overrides(value, setting_file=parameter_file)


def _braced(names: Any) -> str:
    return ", ".join("{" + name + "}" for name in sorted(names))


def _line_of(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else None
