"""A server's ``parameter.yaml``: the single source of its settings' defaults, and ``${VAR}`` expansion."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_base import redact
from ultra_base.errors import InputError, closest
from ultra_base.variable_counts import COUNT_KEYS, ENV_REFERENCE, count_from, reference

CAPS_KEY = "caps"  # parameter.yaml's caps on counts (ultra_kit.limits.caps): not a setting, no caller can pass it


def load_parameter_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a ``parameter.yaml`` mapping of setting name to default value (empty if absent); its ``caps``
    mapping is not a setting and is left out (``load_caps`` reads it).

    Within the size, depth and alias limits of ``ultra_base.file_limits`` (those of pipeline files).
    """
    return {key: value for key, value in _load_whole(path).items() if key != CAPS_KEY}


def load_caps(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``caps`` mapping of a ``parameter.yaml`` (empty if it has none)."""
    caps = _load_whole(path).get(CAPS_KEY)
    return caps if isinstance(caps, dict) else {}


def _load_whole(path: str | os.PathLike[str]) -> dict[str, Any]:
    import yaml

    from ultra_base.file_limits import load_limited_yaml

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


def expand_env(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """Replace ``${VAR}`` in strings (recursively in lists and dicts) with the environment's value.

    A reference to an unset variable raises InputError naming the variable; values are never
    logged, and each expanded value is remembered as a secret (``ultra_base.redact``), so the
    servers' results, errors and logs show ``***`` instead. A mapping's count (``max_workers: ${WORKERS}``)
    becomes the whole number its variable holds, shown by its reference (``expand_item``).
    """
    env = os.environ if environ is None else environ
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise InputError(f"environment variable {name} is not set; export {name}=... before running")
            redact.remember(env[name])
            return env[name]

        return ENV_REFERENCE.sub(substitute, value)
    if isinstance(value, list):
        return [expand_env(item, env) for item in value]
    if isinstance(value, dict):
        return {key: expand_item(key, item, env) for key, item in value.items()}
    return value


def expand_item(key: Any, value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """``expand_env`` of a mapping's ``key: value``; a count (``max_workers: ${WORKERS}``, a key of
    ``ultra_base.variable_counts.COUNT_KEYS``) becomes the whole number its variable holds, shown as ``${WORKERS}``,
    and is left as written when it holds anything else (its check refuses it by name, never by value)."""
    env = os.environ if environ is None else environ
    if key not in COUNT_KEYS or not isinstance(value, str) or "${" not in value:
        return expand_env(value, env)
    if reference(value) is None:
        return value  # "${A}x" is no count: refused as written
    expanded = expand_env(value, env)  # an unset variable is refused as elsewhere; the value is remembered
    counted = count_from(value, {reference(value): expanded})
    return value if counted is None else counted  # (a 0 is a count, refused by its check)


def env_references(value: Any) -> set[str]:
    """The names of all ``${VAR}`` references inside ``value``."""
    if isinstance(value, str):
        return set(ENV_REFERENCE.findall(value))
    if isinstance(value, list):
        return set().union(*(env_references(item) for item in value)) if value else set()
    if isinstance(value, dict):
        return set().union(*(env_references(item) for item in value.values())) if value else set()
    return set()


SERVERS_DIR = Path(__file__).resolve().parent.parent / "servers"  # the servers package beside this one
# The parameter.yaml of the server whose tool runs in this context (set by the tool wrapper: ``running_server``)
_running: ContextVar[Path | None] = ContextVar("running_server", default=None)


@contextmanager
def running_server(parameter_file: str | os.PathLike[str]) -> Iterator[None]:
    """Inside the block (a tool call), ``parameter_path`` is ``parameter_file``: the file the server was built from,
    wherever its package lives (``servers/<name>/`` or a folder a pipeline names by its path). A bare file name (a
    tool wrapped without a server package) names no server."""
    path = Path(parameter_file)
    token = _running.set(path if path.parent.name else None)
    try:
        yield
    finally:
        _running.reset(token)


def parameter_path(server: str) -> Path:
    """The ``parameter.yaml`` holding the defaults and caps of ``server``: ``servers/<server>/parameter.yaml``; inside
    a tool call, its own server's file (``running_server``), so a server outside ``servers/`` (or a copy of a
    shipped one under its name) runs with the caps ``ultra build`` held it to. A tool reads only its own server's:
    another name is an InputError (it would escape its caps by reading another server's)."""
    own = _running.get()
    if own is None:
        return SERVERS_DIR / server / "parameter.yaml"
    if own.parent.name != server:
        raise InputError(
            f"a tool of the {own.parent.name} server asked for the settings of the {server!r} server; a server's "
            f"tools read only its own parameter.yaml ({shown_file(own)})"
        )
    return own


def shown_file(path: str | os.PathLike[str]) -> str:
    """A file as a message names it: relative to the project when inside it (``servers/judge/parameter.yaml``)."""
    try:
        return str(Path(path).resolve().relative_to(SERVERS_DIR.parent))
    except ValueError:
        return str(path)


def defaults(server: str) -> dict[str, Any]:
    """The settings' defaults of ``servers/<server>/parameter.yaml`` (``parameter_path``: inside a tool call, its
    server's own file): what Python callers use, as the tools do."""
    path = parameter_path(server)
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
    ``backend: local``, or a pool of ``endpoints`` or a ``jury``, each with its own key) and no ``api_key`` gets ``""``,
    so a key never goes to a host it was not written for. (Over MCP such a call is refused before this, saying
    why: ``check_key_hosts``.)
    """
    elsewhere = any(key in given for key in ("base_url", "endpoints", "jury")) or given.get("backend") == "local"
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
    merged = merge_mapping(base, given)
    return {key: value if key in given else expand_item(key, value) for key, value in merged.items()}


# Keys bound to their hosts: a ${VAR} value goes only to the host the parameter file configured for it.

HOW_TO_ALLOW = (
    "a tool call may not send a value of the user's environment to a host the user did not configure; "
    "to use another host with a key from the environment, the user sets base_url and api_key together in {source} "
    "(or in the pipeline's parameter file for `ultra run`), or runs `ultra call` in process"
)
_warned: set[str] = set()


@dataclass(frozen=True)
class _Target:
    """Where one endpoint of an LLM mapping sends its requests, and with which key."""

    where: str  # judge_llm, judge_llm.endpoints[1]
    url: str  # as written (never expanded: a message may show it)
    key: str  # as written
    key_given: bool  # the caller wrote api_key for this endpoint


def check_key_hosts(given: dict[str, Any], defaults: dict[str, Any], *, source: str, in_process: bool) -> None:
    """Refuse a tool call that would send a key (or any ``${VAR}`` value) to a host the parameter file did not
    configure for it; in process (the user's own ``ultra call``) print a warning on stderr instead.

    ``given``: the call's setting values as the caller sent them (not merged, not expanded); ``defaults``: the
    server's parameter.yaml (``source`` names it). A mapping setting with an ``api_key`` key is an endpoint: its
    ``${VAR}`` key is bound to the ``base_url`` (or pool entries) the file pairs it with. Over MCP, a call is
    refused when it names another host while the file configures a key, without an ``api_key`` of its own (a
    literal; ``""`` for a server without auth); when it sends a ``${VAR}`` key to a host the file did not pair
    with that variable; and when, sending requests to such a host, any setting it gives references ``${VAR}``.
    """
    problems = key_host_problems(given, defaults, source=source)
    if in_process:
        for secret, message in problems:
            if secret and message not in _warned:  # a missing key sends none: nothing to warn about
                _warned.add(message)
                print(f"[ultra] warning: {message} (allowed: you run this call in process)", file=sys.stderr)
        return
    if problems:
        texts = [message for _, message in problems]
        raise InputError(f"refused: {'; '.join(texts)}; {HOW_TO_ALLOW.format(source=source)}")


def key_host_problems(given: dict[str, Any], defaults: dict[str, Any], *, source: str) -> list[tuple[bool, str]]:
    """``(sends a ${VAR} value, message)`` for each way the call breaks the binding (see ``check_key_hosts``)."""
    problems: list[tuple[bool, str]] = []
    foreign: list[str] = []
    for name, value in given.items():
        default = defaults.get(name)
        if not (isinstance(default, dict) and "api_key" in default and isinstance(value, dict)):
            continue
        configured = _targets(name, default, default)
        bound = {(_origin(t.url), var) for t in configured for var in env_references(t.key)}
        origins = {_origin(t.url) for t in configured}
        keys = sorted({_shown_key(t.key) for t in configured if t.key})
        for target in _targets(name, merge_mapping(default, value), value):
            here = _origin(target.url)
            if here not in origins:
                foreign.append(target.url)
                if keys and not target.key_given:
                    problems.append((False, _missing_key(target, keys, configured, source)))
            for var in sorted(env_references(target.key)):
                if (here, var) not in bound:
                    hosts = [t.url for t in configured if var in env_references(t.key)]
                    where = f"binds it to {', '.join(hosts)} only" if hosts else "binds it to no host"
                    problems.append(
                        (True, f"{target.where} would send the key ${{{var}}} to {target.url}, but {source} {where}")
                    )
    if foreign:
        for where, var in _caller_references(given, defaults):
            problems.append(
                (
                    True,
                    f"{where} references ${{{var}}} in a call that sends requests to {foreign[0]}, a host {source} "
                    "does not configure: the variable's value would go there",
                )
            )
    return problems


def _missing_key(target: _Target, keys: list[str], configured: list[_Target], source: str) -> str:
    hosts = ", ".join(t.url for t in configured if t.key)
    return (
        f"{_url_setting(target)} names {target.url} without api_key, while the key {source} configures "
        f"({', '.join(keys)}) "
        f'goes only to {hosts}; give {target.where}.api_key yourself (your own key, or "" for a server without auth)'
    )


def _shown_key(key: str) -> str:
    """A configured key as a message may show it: its ``${VAR}`` references, never a literal key."""
    references = sorted(env_references(key))
    return ", ".join(f"${{{name}}}" for name in references) if references else "a key written there"


def _url_setting(target: _Target) -> str:
    return target.where if target.where.endswith("]") else f"{target.where}.base_url"


def _targets(name: str, mapping: dict[str, Any], given: dict[str, Any]) -> list[_Target]:
    """The endpoints an LLM mapping sends requests to: its pool entries, or its base_url (none for a local model);
    with a ``jury``, each member's (a member's key is its own: one without api_key sends none)."""
    jury = mapping.get("jury")
    if isinstance(jury, list) and jury:
        inherited = {k: v for k, v in mapping.items() if k not in ("jury", "base_url", "endpoints", "api_key")}
        return [
            target
            for i, member in enumerate(jury)
            if isinstance(member, dict)
            for target in _targets(f"{name}.jury[{i}]", {**inherited, "api_key": "", **member}, member)
        ]
    if mapping.get("backend") == "local":
        return []
    entries = mapping.get("endpoints")
    if isinstance(entries, list) and entries:
        return [
            _Target(f"{name}.endpoints[{i}]", str(e.get("base_url") or ""), str(e.get("api_key") or ""), "api_key" in e)
            for i, e in enumerate(entries)
            if isinstance(e, dict) and e.get("base_url")
        ]
    url = str(mapping.get("base_url") or "")
    return [_Target(name, url, str(mapping.get("api_key") or ""), "api_key" in given)] if url else []


def _origin(url: str) -> str:
    """``scheme://host:port`` of a base_url (its ``${VAR}`` expanded when set), the unit a key is bound to."""
    from urllib.parse import urlsplit

    text = ENV_REFERENCE.sub(lambda m: os.environ.get(m.group(1), m.group(0)), url).strip()
    try:
        parts = urlsplit(text)
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme.lower())
    except ValueError:
        return text.rstrip("/")
    if not parts.scheme or not parts.hostname:
        return text.rstrip("/")
    return f"{parts.scheme.lower()}://{parts.hostname.lower()}:{port}"


def _caller_references(given: dict[str, Any], defaults: dict[str, Any]) -> list[tuple[str, str]]:
    """``(where, VAR)`` for each ``${VAR}`` in what the caller wrote (values that differ from parameter.yaml's),
    keys of endpoint mappings aside (bound or refused on their own), and counts (``max_workers: ${WORKERS}``: read
    as a number that no request carries, or refused, never expanded into one: ``expand_item``)."""
    found: list[tuple[str, str]] = []
    for name, value in given.items():
        default = defaults.get(name)
        if value == default:
            continue
        if not (isinstance(value, dict) and isinstance(default, dict)):
            found += [(name, var) for var in sorted(env_references(value))]
            continue
        endpoint = "api_key" in default
        for key, item in value.items():
            if item == default.get(key) or (endpoint and key == "api_key") or key in COUNT_KEYS:
                continue
            if endpoint and key in ("endpoints", "jury") and isinstance(item, list):
                item = [{k: v for k, v in e.items() if k != "api_key" and k not in COUNT_KEYS} if isinstance(e, dict)
                        else e for e in item]  # fmt: skip
            found += [(f"{name}.{key}", var) for var in sorted(env_references(item))]
    return found
