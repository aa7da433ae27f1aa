"""A server's LLM mapping setting (``judge_llm``, ``generation_llm`` ...): its published description, and the
mapping turned into ``LLMSettings``."""

from __future__ import annotations

from typing import Any

from ultra_kit.limits.caps import capped
from ultra_kit.settings import complete_mapping, expand_env
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


# each retry sends a failed request again, each worker keeps one in flight: counts within the server's caps
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
    ``${VAR}`` value to a host the parameter file did not configure.) ``max_retries`` and ``max_workers`` are at most
    the server's ``caps`` of the same names.
    """
    # complete_mapping applies the api_key rule (merge_mapping)
    settings = LLMSettings.from_mapping(
        complete_mapping(expand_env(given), server=server, setting=setting), name=setting, **pacing
    )
    for name in LIMIT_MINIMUMS:
        capped_limit(getattr(settings, name), name, server=server, setting=setting)
    return settings


def capped_limit(value: Any, name: str, *, server: str, setting: str) -> int:
    """``<setting>.<name>`` (``max_retries`` or ``max_workers``) as a count from its minimum up to the server's cap
    of that name: an InputError naming the value, the cap and the file that sets it otherwise."""
    return capped(value, f"{setting}.{name}", server=server, name=name, minimum=LIMIT_MINIMUMS[name])
