"""The ``target`` setting checked: its kind, that kind's keys and the runner's, with errors naming the key."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from servers.target.kinds import COMMON_KEYS, KINDS, kind_module
from servers.target.kinds.base import KindContext
from servers.target.runner.calls import Policy
from ultra_base.errors import InputError, closest, read_roots
from ultra_kit.llm_mapping import check_limits
from ultra_kit.settings import defaults


def checked(target: Any) -> dict[str, Any]:
    """``target`` with unknown keys refused (naming the closest) and the runner's numbers checked."""
    if not isinstance(target, Mapping):
        raise InputError(f"target must be a mapping with a kind ({', '.join(KINDS)}), got {type(target).__name__}")
    known = defaults("target")["target"]
    unknown = [key for key in target if key not in known]
    if unknown:
        hints = [f"{key!r} -> {near!r}" for key in unknown if (near := closest(key, known))]
        hint = f"; did you mean {', '.join(hints)}?" if hints else ""
        raise InputError(f"target has unknown keys {sorted(unknown)}{hint}; the keys are in docs/targets.md")
    target = {**known, **target}
    check_limits(target, server="target", setting="target")  # max_workers, max_retries: within the server's caps
    for key, low in (("timeout", 0.0), ("rate_limit", 0.0), ("max_answer_chars", 1), ("max_response_bytes", 1),
                     ("max_json_depth", 1)):  # fmt: skip
        value = target[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < low:
            raise InputError(f"target.{key} must be a finite number of at least {low:g}, got {value!r}")
    if target["timeout"] <= 0:
        raise InputError(f"target.timeout must be more than 0 seconds, got {target['timeout']!r}")
    if not isinstance(target["settings"], Mapping):
        raise InputError("target.settings must be a mapping (e.g. {top_k: 5})")
    kind_module(str(target["kind"]))  # an unknown or unavailable kind fails here, before anything is asked
    return target


def policy_of(target: Mapping[str, Any]) -> Policy:
    return Policy(float(target["timeout"]), int(target["max_workers"]), float(target["rate_limit"]),
                  int(target["max_retries"]))  # fmt: skip


def context_of(target: Mapping[str, Any]) -> KindContext:
    return KindContext(tuple(read_roots()), float(target["timeout"]), int(target["max_response_bytes"]),
                       int(target["max_json_depth"]))  # fmt: skip


def kind_keys(target: Mapping[str, Any]) -> dict[str, Any]:
    """The keys the kind reads and the common ones: what identifies the target (the journal's fingerprint)."""
    module = kind_module(str(target["kind"]))
    return {key: target[key] for key in (*COMMON_KEYS, *module.KEYS) if key in target}


def cache_file(value: Any) -> Path | None:
    """``target_cache`` as a path inside the output folder, or None when it is ''."""
    from ultra_kit.paths.output_root import check_inside_output

    if not value:
        return None
    if not isinstance(value, str) or not value.endswith((".sqlite", ".db")):
        raise InputError(f"target.target_cache must be a .sqlite file (or '' for none), got {value!r}")
    return check_inside_output(value, setting="target.target_cache")
