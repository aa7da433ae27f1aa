"""The one place where the judge server turns its ``judge_llm`` setting into ``LLMSettings``."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_base.variable_counts import COUNT_KEYS, reference, total
from ultra_kit.limits.caps import capped
from ultra_kit.llm_mapping import settings_for
from ultra_kit.settings import complete_mapping, expand_item
from ultra_llm.settings import PANEL_KEYS, LLMSettings


def judge_settings(judge_llm: Any, **pacing: float) -> LLMSettings:
    """``judge_llm`` checked, its left-out keys from parameter.yaml (``pacing``: the retry policy; tests shorten it),
    its ``samples`` and jury members within the server's caps."""
    return within_caps(settings_for(judge_llm, server="judge", setting="judge_llm", **pacing))


def within_caps(settings: LLMSettings) -> LLMSettings:
    """``settings``, unless its samples or jury members are more than the judge server's caps (they multiply every
    request; the requests are built before the first is sent)."""
    capped(settings.samples, "judge_llm.samples", server="judge", name="samples", minimum=1)
    capped(len(settings.jury), "judge_llm.jury (its members)", server="judge", name="jury_members")
    for i, member in enumerate(settings.jury):  # each member keeps its own requests in flight
        capped(member.max_workers, f"judge_llm.jury[{i}].max_workers", server="judge", name="max_workers")
    if settings.jury:  # ... together within the cap of one judge_llm
        workers = total([member.max_workers for member in settings.jury])  # a ${VAR}'s shown by name
        capped(workers, "judge_llm.jury's max_workers (its members' sum)", server="judge", name="max_workers")
    return settings


def check_judge_llm(value: Any, *, parameter_file: str) -> None:
    """``ultra build``'s check of ``judge_llm``'s panel (``ServerSpec.setting_checks``): a jury of one, a jury_min
    out of range, an unknown jury_aggregate, samples > 1 without a temperature ... refused at file:line, by the
    same checks the tools run. Only the panel keys are checked here (the endpoint's ``${VAR}`` values are read
    when the step runs); a member's ``${VAR}`` values stand in as placeholders."""
    if not isinstance(value, Mapping):
        return
    panel = {key: _placeholders(value[key]) for key in PANEL_KEYS if key in value}
    if not panel:
        return
    try:
        within_caps(LLMSettings.from_mapping(complete_mapping({"api_key": "", **panel}, server="judge",
                                                              setting="judge_llm"), name="judge_llm"))  # fmt: skip
    except InputError as exc:
        message = str(exc)
        found = {
            key: m.start() for key in PANEL_KEYS if key in value and (m := re.search(rf"judge_llm\.{key}\b", message))
        }
        named = sorted(found, key=found.__getitem__)  # the key the message names first
        line = _key_line(parameter_file, named[0] if named else "", value)
        raise InputError(message, path=parameter_file, line=line) from None


def _placeholders(value: Any) -> Any:
    """``value`` with each ``${VAR}`` text replaced by a stand-in of its own (a URL for a base_url)."""
    if isinstance(value, Mapping):
        return {k: _stand_in(k, v) if _variable(v) else _placeholders(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_placeholders(v) for v in value]
    return value


def _stand_in(key: Any, value: str) -> Any:
    """A ``${VAR}`` text's stand-in; a count's (``max_workers: ${WORKERS}``) is read as the step reads it, named by its
    reference (``ultra_kit.settings.expand_item``), or 1 while its variable is not set (the step names it)."""
    if key in COUNT_KEYS:
        name = reference(value)
        return value if name is None else expand_item(key, value) if name in os.environ else 1
    return "http://variable.invalid" if key == "base_url" else re.sub(r"\W", "_", value)


def _variable(value: Any) -> bool:
    return isinstance(value, str) and "${" in value


def _key_line(path: str, key: str, mapping: Any) -> int | None:
    """The line of ``key:`` at or after the mapping's first line in the file (numbers carry no line)."""
    start = getattr(mapping, "line", None)
    if not key or not start:
        return start
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return start
    for number in range(start - 1, len(lines)):
        if re.match(rf"\s*{re.escape(key)}\s*:", lines[number]):
            return number + 1
    return start


check_judge_llm.reads_variables = True  # type: ignore[attr-defined]  # ultra build passes it values with ${VAR}
