"""A server's LLM mapping setting (``judge_llm``, ``generation_llm`` ...): its published description, the mapping
turned into ``LLMSettings``, and the one rule on the ``max_retries`` / ``max_workers`` of a mapping setting (an LLM
mapping, the retriever's ``dense``, the target's ``target``): counts within the server's caps of the same names."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_base.variable_counts import VariableCount, reference
from ultra_kit.limits.caps import capped
from ultra_kit.settings import (
    complete_mapping,
    expand_env,
    expand_item,
    load_caps,
    load_parameter_file,
    parameter_path,
)
from ultra_kit.yaml_files.lines import line_of
from ultra_llm.settings import (
    BACKENDS,
    BATCH_KEYS,
    ENDPOINT_KEYS,
    JURY_AGGREGATES,
    JURY_MEMBER_KEYS,
    LIMIT_KEYS,
    MODES,
    PANEL_KEYS,
    POOL_ENTRY_KEYS,
    POOL_KEYS,
    LLMSettings,
)

# A few words on the keys that need them; a key without a note is listed by its name alone.
KEY_NOTES = {
    "backend": " | ".join(BACKENDS),
    "structured_output": "send the reply schema; always on for local",
    "embedding_model": "for embeddings; '' = model_id, or the built-in one for local",
    "timeout": "seconds per request",
    "max_retries": "per request and per unreadable reply",
    "max_workers": "requests in flight",
    "endpoints": f"a pool: [{{{', '.join(POOL_ENTRY_KEYS)}}}]",
    "drain_after": "a pool endpoint failing this many requests in a row is drained",
    "cool_down": "seconds a drained endpoint rests",
    "mode": " | ".join(MODES),
    "temperature": "judges: null = each judge's own",
    "samples": "judges: judgments per item; needs temperature > 0",
    "jury": f"judges: 2+ different models [{{{', '.join(JURY_MEMBER_KEYS)}}}]",
    "jury_aggregate": "judges: " + " | ".join(JURY_AGGREGATES),
    "jury_min": "judges: jury members that must answer an item",
}


def llm_mapping_description() -> str:
    """The description every server publishes for its LLM mapping setting, built from the keys
    ``LLMSettings.from_mapping`` accepts (so a new key shows up without an edit here)."""
    keys = [f"{key} ({KEY_NOTES[key]})" if key in KEY_NOTES else key for key in _keys()]
    return (
        f"an LLM mapping {{{', '.join(keys)}}}; keys left out take parameter.yaml's values. A ${{VAR}} key goes "
        "only to the host parameter.yaml pairs it with: a call naming another base_url or endpoints gives its own "
        "api_key ('' for none), and references no ${VAR} (refused otherwise)"
    )


# The one rule on the limits of a mapping setting (an LLM mapping such as judge_llm, the retriever's dense, the target):
# its key of each name here is a count from this minimum up to the server's cap of the same name (caps.max_workers ...).
# Each retry sends a failed request again, each worker keeps one in flight.
LIMIT_MINIMUMS = {"max_retries": 0, "max_workers": 1}


def _keys() -> tuple[str, ...]:
    """The mapping's keys in the order a reader meets them: endpoint, limits, pool, batch mode."""
    return ENDPOINT_KEYS + LIMIT_KEYS + POOL_KEYS + BATCH_KEYS + PANEL_KEYS


def settings_for(given: Any, *, server: str, setting: str, **pacing: float) -> LLMSettings:
    """``LLMSettings`` from a server's LLM mapping setting (``judge_llm`` ...), its left-out keys from parameter.yaml.

    The default ``api_key`` belongs to the default endpoint: a caller who names another endpoint
    (``base_url``, ``endpoints``) or a local model and no key gets none, so a key never goes to a host
    it was not written for, and a local model needs nothing from the environment. (A tool call over MCP
    is checked before this: ``ultra_kit.settings.check_key_hosts`` refuses one that would send a
    ``${VAR}`` value to a host the parameter file did not configure.) ``max_retries`` and ``max_workers`` are
    counts within the server's ``caps`` of the same names (``check_limits``, as ``ultra build`` checks them); a
    pool's ``max_workers`` is its endpoints' ``max_concurrency`` summed, within the same cap.
    """
    # complete_mapping applies the api_key rule (merge_mapping)
    mapping = complete_mapping(expand_env(given), server=server, setting=setting)
    check_limits(mapping, server=server, setting=setting)
    settings = LLMSettings.from_mapping(mapping, name=setting, **pacing)
    if settings.endpoints:  # the sum from_mapping took (a max_concurrency of "3" counts 3)
        capped_pool([endpoint.max_concurrency for endpoint in settings.endpoints], server=server, setting=setting)
    return settings


def capped_limit(value: Any, name: str, *, server: str, setting: str, caps_file: Path | None = None) -> int:
    """``<setting>.<name>`` (``max_retries`` or ``max_workers``) as a count from its minimum up to the server's cap
    of that name: an InputError naming the value (a ``${VAR}``'s by its reference), the cap and the file that sets
    it otherwise (``caps_file``: the parameter.yaml of a server outside ``servers/``, ``ultra_kit.limits.caps.cap``)."""
    minimum = LIMIT_MINIMUMS[name]
    return capped(value, f"{setting}.{name}", server=server, name=name, minimum=minimum, caps_file=caps_file)


def capped_pool(
    workers: list[int],
    *,
    server: str,
    setting: str,
    lines: list[int | None] | None = None,
    caps_file: Path | None = None,
) -> int:
    """A pool's requests in flight, its endpoints' ``max_concurrency`` (``workers``, each >= 1) summed, within the
    server's ``caps.max_workers``: over it, an InputError naming each endpoint's value (at its line of ``lines``)."""
    lines = lines or [None] * len(workers)
    terms = [f"{count}" + (f" (line {line})" if line else "") for count, line in zip(workers, lines, strict=True)]
    total = sum(workers)
    hidden = any(isinstance(count, VariableCount) for count in workers)  # a sum holding a ${VAR}'s value is not shown
    total = VariableCount(total, "together" if hidden else f"= {total:,}")
    what = f"{setting}.endpoints' max_concurrency {' + '.join(terms)}"
    return capped(total, what, server=server, name="max_workers", minimum=1, caps_file=caps_file)


def check_limits(
    mapping: Mapping[str, Any],
    *,
    server: str,
    setting: str,
    path: str | None = None,
    default_workers: Any = None,
    caps_file: Path | None = None,
) -> None:
    """Each limit of ``LIMIT_MINIMUMS`` that ``mapping`` (the value of ``setting``) holds, by ``capped_limit``, and
    a pool's sum by ``capped_pool``: what the server's tools check when they run, and ``ultra build`` / ``ultra run``
    before the first step. ``path``: the file ``mapping`` was read from with lines (``ultra_kit.yaml_files.lines``),
    its ``${VAR}`` not yet expanded, named with the key's line; a variable not set there is left to the step (which
    names it), and ``default_workers`` is the ``max_workers`` an endpoint without ``max_concurrency`` takes.
    ``caps_file``: the parameter.yaml holding the caps of a server outside ``servers/`` (``capped_settings``)."""
    for name in LIMIT_MINIMUMS:
        if name not in mapping or (value := _read(mapping[name], path)) is _UNSET:
            continue
        try:
            capped_limit(value, name, server=server, setting=setting, caps_file=caps_file)
        except InputError as exc:
            if path is None:
                raise
            raise InputError(str(exc), path=path, line=line_of(mapping, name)) from None
    workers = mapping.get("max_workers", default_workers)
    endpoints = mapping.get("endpoints")
    if not endpoints or not isinstance(endpoints, list) or not all(isinstance(e, Mapping) for e in endpoints):
        return  # not a pool (or not a list of mappings: the tool says so)
    counts = [_read(workers if e.get("max_concurrency") is None else e["max_concurrency"], path) for e in endpoints]
    if all(isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in counts):  # else the tool refuses it
        lines = [line_of(e, "max_concurrency") for e in endpoints] if path else None
        try:
            capped_pool(counts, server=server, setting=setting, lines=lines, caps_file=caps_file)
        except InputError as exc:
            if path is None:
                raise
            raise InputError(str(exc), path=path, line=line_of(mapping, "endpoints")) from None


_UNSET = object()


def _read(value: Any, path: str | None) -> Any:
    """A limit as the step will read it: in a parameter file (``path``), a ``${VAR}`` of the environment
    (``ultra_kit.settings.expand_item``), ``_UNSET`` if the variable is not set; given to a tool, as it is."""
    if path is None or not reference(value):
        return value
    name = reference(value)
    return expand_item("max_workers", value) if name in os.environ else _UNSET


def capped_settings(server: str, caps_file: Path | None = None) -> tuple[str, ...]:
    """The mapping settings of ``servers/<server>/parameter.yaml`` (or of ``caps_file``, the parameter.yaml of a
    server outside ``servers/``) holding a limit of ``LIMIT_MINIMUMS`` that the same file's ``caps`` bound
    (``judge_llm``, ``dense`` ...): read from that file alone (no server is imported), so a server declares them by
    its parameter.yaml; () for a server that has none (or no such file)."""
    file = caps_file or parameter_path(server)
    if not file.is_file():
        return ()
    caps = load_caps(file)
    return tuple(
        setting
        for setting, default in load_parameter_file(file).items()
        if isinstance(default, dict) and any(name in default and name in caps for name in LIMIT_MINIMUMS)
    )
