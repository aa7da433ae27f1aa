"""A server's ``parameter.yaml``: the single source of its settings' defaults, and ``${VAR}`` expansion."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ultra_kit import redact
from ultra_kit.errors import InputError, closest

_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def load_parameter_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a ``parameter.yaml`` mapping of setting name to default value (empty if absent).

    Within the size, depth and alias limits of ``ultra_kit.yaml_limits`` (those of pipeline files).
    """
    import yaml

    from ultra_kit.yaml_limits import load_limited_yaml

    file = Path(path)
    if not file.exists():
        return {}
    try:
        data = load_limited_yaml(file, kind="parameter")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(f"invalid YAML: {getattr(exc, 'problem', exc)}", path=str(file), line=line) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError("expected a mapping of setting name to value", path=str(file))
    return data


def expand_env(value: Any, environ: dict[str, str] | None = None) -> Any:
    """Replace ``${VAR}`` in strings (recursively in lists and dicts) with the environment's value.

    A reference to an unset variable raises InputError naming the variable; values are never
    logged, and each expanded value is remembered as a secret (``ultra_kit.redact``), so the
    servers' results, errors and logs show ``***`` instead.
    """
    env = os.environ if environ is None else environ
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise InputError(f"environment variable {name} is not set; export {name}=... before running")
            redact.remember(env[name])
            return env[name]

        return _ENV_REFERENCE.sub(substitute, value)
    if isinstance(value, list):
        return [expand_env(item, env) for item in value]
    if isinstance(value, dict):
        return {key: expand_env(item, env) for key, item in value.items()}
    return value


def env_references(value: Any) -> set[str]:
    """The names of all ``${VAR}`` references inside ``value``."""
    if isinstance(value, str):
        return set(_ENV_REFERENCE.findall(value))
    if isinstance(value, list):
        return set().union(*(env_references(item) for item in value)) if value else set()
    if isinstance(value, dict):
        return set().union(*(env_references(item) for item in value.values())) if value else set()
    return set()


SERVERS_DIR = Path(__file__).resolve().parent.parent / "servers"  # the servers package beside this one


def defaults(server: str) -> dict[str, Any]:
    """The settings' defaults of ``servers/<server>/parameter.yaml``: what Python callers use, as the tools do."""
    path = SERVERS_DIR / server / "parameter.yaml"
    if not path.is_file():
        known = sorted(p.parent.name for p in SERVERS_DIR.glob("*/parameter.yaml"))
        raise InputError(f"no server named {server!r}; servers with settings: {known}")
    return load_parameter_file(path)


def merge_mapping(default: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``given`` with the keys it leaves out taken from ``default`` (a mapping setting's parameter.yaml value).

    One level deep: a mapping setting is a record with fixed keys (``bm25: {k1, b, ...}``), and a
    value inside it that is itself a mapping is taken whole (``benchmark.key_map`` maps the
    caller's own names: merging defaults into it would add variables nobody asked for). Keys that
    ``default`` lacks are kept (the tool decides whether they are allowed).

    The default ``api_key`` belongs to the default endpoint: a caller who names a ``base_url`` (or
    ``backend: local``, or a pool of ``endpoints``, each with its own key) and no ``api_key`` gets ``""``,
    so a key never goes to a host it was not written for.
    """
    elsewhere = "base_url" in given or "endpoints" in given or given.get("backend") == "local"
    if "api_key" in default and "api_key" not in given and elsewhere:
        given = {**given, "api_key": ""}
    return {**default, **given}


def complete_mapping(given: Any, *, server: str, setting: str) -> dict[str, Any]:
    """A mapping setting with the keys the caller left out taken from ``parameter.yaml`` (``${VAR}`` expanded).

    Keys that the default does not have are an error naming the closest and the known ones.
    """
    base = defaults(server).get(setting)
    if not isinstance(base, dict):
        raise InputError(f"{setting} is not a mapping setting of the {server} server")
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise InputError(f"{setting} must be a mapping with keys {sorted(base)}, got {type(given).__name__}")
    unknown = [key for key in given if key not in base]
    if unknown:
        hints = [f"'{key}' -> '{near}'" for key in unknown if (near := closest(key, base))]
        hint = f"; did you mean {', '.join(hints)}?" if hints else ""
        raise InputError(f"{setting} has unknown keys {sorted(unknown)}; known keys: {sorted(base)}{hint}")
    return {key: value if key in given else expand_env(value) for key, value in merge_mapping(base, given).items()}
