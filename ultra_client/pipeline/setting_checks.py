"""The servers' own checks of setting values, run before any tool: a judge's rubric with an unknown input,
say, is refused at ``ultra build`` naming the parameter file (or the rubric file) and the line, instead of
failing the run's step later.

A server's ``SPEC.setting_checks`` maps a setting to ``"module:function"``; ``function(value,
parameter_file=path)`` raises ``InputError`` at file:line. The value is the parameter file's, read with
lines (its mappings, lists and texts carry ``.line``). A value holding ``${VAR}`` is left to the tool unless the
function says it reads such values (``function.reads_variables = True``: it checks the rest itself).

Before those, the limits of each mapping setting that the server's ``parameter.yaml`` caps (``judge_llm``'s
``max_workers`` within ``caps.max_workers`` ..., and a pool's ``max_workers``, its endpoints' ``max_concurrency``
summed: ``ultra_kit.llm_mapping.capped_settings``) are checked by the check the tools run (``check_limits``), so a
value over a cap, a 0 or a 1.5 is refused before the first step, with the message the step would give, at the
parameter file's line. A limit written ``${VAR}`` is read from the environment as the step reads it (a whole number,
named by its reference in every message); a variable not set is left to the step, which names it.

``settings_to_send`` is what ``ultra run`` and each sweep trial send the servers: the settings expanded, a typed
one written ``${VAR}`` as its type (``setting_kinds``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_client.errors import UltraError, as_ultra_error, located
from ultra_kit.yaml_files.lines import load_yaml_with_lines


def check_setting_values(servers: dict[str, Any], target: Path) -> None:
    """Each server's checks of its settings in the parameter file ``target`` (read with lines); UltraError at the
    first mistake. A value holding ``${VAR}`` is left to the tool (the variable is read when the step runs)."""
    from ultra_kit.factory import named_function
    from ultra_kit.inprocess import load_spec

    with as_ultra_error():
        data = load_yaml_with_lines(target, "parameter") or {}
    for alias, server in servers.items():
        section = data.get(alias) if isinstance(data, dict) else None
        if not isinstance(section, dict):
            continue
        check_section_limits(alias, section, server.location.package_dir, target)
        check_typed_settings(alias, section, setting_kinds(server), target)
        spec = getattr(server, "spec", None) or load_spec(server.location.module, server.location.root)
        for name, value in section.items():
            if spec is None or name not in spec.setting_checks:
                continue
            check = named_function(spec.setting_checks[name])
            if "${" in repr(value) and not getattr(check, "reads_variables", False):
                continue
            try:
                check(value, parameter_file=str(target))
            except InputError as exc:
                raise UltraError(f"{alias}.{name}: {exc}") from None


def check_typed_settings(alias: str, section: dict[str, Any], kinds: dict[str, type], target: Path) -> None:
    """Each setting of ``section`` typed int/float/bool (``kinds``) and written as one ``${VAR}`` read as the tool reads
    it (``ultra_kit.wrapping.typed_settings``); UltraError at the parameter file's line naming the reference (never
    the value) for a text of another kind. A variable not set is left to the step, which names it."""
    from ultra_kit.wrapping.typed_settings import read_typed

    for name, value in section.items():
        try:
            read_typed(value, kinds.get(str(name)), setting=str(name), unset_ok=True)
        except InputError as exc:
            raise UltraError(f"{alias}.{name}: {located(target, getattr(value, 'line', None), str(exc))}") from None


def setting_kinds(server: Any) -> dict[str, type]:
    """``{setting: int/float/bool}`` of the server's tools' settings so typed: read from the wrapped tools in process,
    from the tools' input schemas (their MCP listing) otherwise."""
    from ultra_kit.wrapping.typed_settings import schema_kinds

    kinds: dict[str, type] = {}
    local = getattr(server, "local", None) or {}
    for name, info in (getattr(server, "tools", None) or {}).items():
        wrapped = local.get(name)
        found = getattr(wrapped.function, "__typed_settings__", {}) if wrapped else schema_kinds(info.input_schema)
        for setting, kind in found.items():
            if setting in info.settings:
                kinds.setdefault(setting, kind)
    return kinds


def check_section_limits(alias: str, section: dict[str, Any], package_dir: Path, target: Path | None) -> None:
    """The capped limits of the server's mapping settings in its ``section`` of a parameter file, within the caps of
    the server's own ``parameter.yaml`` (``servers/<name>/parameter.yaml``, or the one in the package of a server
    outside ``servers/``), read from ``target`` with lines (None: settings made in memory, such as a sweep's trial);
    UltraError naming ``alias.setting`` at the first beyond its cap."""
    from ultra_kit.llm_mapping import check_limits
    from ultra_kit.settings import load_parameter_file

    name = package_dir.name
    settings, caps_file = capped_settings_of(package_dir)
    for setting in settings:
        value = section.get(setting)
        if not isinstance(value, dict):
            continue  # left out (the defaults apply) or not a mapping (the tool says so)
        own = load_parameter_file(caps_file or package_dir / "parameter.yaml")[setting]  # read by capped_settings_of
        workers = own.get("max_workers")  # an endpoint's without max_concurrency (if not given)
        try:
            check_limits(value, server=name, setting=setting, path=None if target is None else str(target),
                         default_workers=workers, caps_file=caps_file)  # fmt: skip
        except InputError as exc:
            raise UltraError(f"{alias}.{setting}: {exc}") from None


def capped_settings_of(package_dir: Path) -> tuple[tuple[str, ...], Path | None]:
    """(The capped mapping settings of the server in ``package_dir``: ``ultra_kit.llm_mapping.capped_settings``, the
    file its caps are in: None for a shipped server, whose tools read ``servers/<name>/parameter.yaml``, else the
    package's own ``parameter.yaml``, which ``ultra build`` holds a server named by its path to alike.)"""
    from ultra_kit.llm_mapping import capped_settings
    from ultra_kit.settings import SERVERS_DIR

    name = package_dir.name
    if package_dir.resolve() == (SERVERS_DIR / name).resolve():
        return capped_settings(name), None
    caps_file = package_dir / "parameter.yaml"
    with as_ultra_error():  # the file's own mistakes, at its line
        return capped_settings(name, caps_file), caps_file


def settings_to_send(
    raw: dict[str, dict[str, Any]], where: Path | str, pipeline: Any, pool: Any
) -> dict[str, dict[str, Any]]:
    """Every server's settings of ``raw`` as a run sends them (``expand_settings``): a setting its tools expand
    themselves stays ``${VAR}`` (``expanded_on_use``), one typed int/float/bool goes as its type
    (``setting_kinds``). ``ultra run`` and each sweep trial send the same; an unset ``${VAR}`` is an UltraError
    naming ``where`` (the parameter file, or a sweep's ``--grid`` key)."""
    from ultra_client.calls.locate import tool_table
    from ultra_client.pipeline.dataflow import expanded_on_use
    from ultra_client.pipeline.params import expand_settings

    on_use = expanded_on_use(pipeline, tool_table(pool))
    return {
        alias: expand_settings(values, where, on_use.get(alias, set()), setting_kinds(pool.servers.get(alias)))
        for alias, values in raw.items()
    }
