"""``ultra call``: one tool, in this process or over stdio, its arguments from the command line or files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ultra_base.errors import unknown_names_message
from ultra_base.file_limits import MAX_DEPTH, ShapeError, load_yaml_value, read_text_file
from ultra_client.calls.local_server import ToolRefused
from ultra_client.calls.locate import locate_named_server, scratch_logs
from ultra_client.calls.server_info import ToolInfo
from ultra_client.calls.server_pool import ServerPool, call_tool_checked, log_name, result_text, structured_result
from ultra_client.errors import UltraError, as_ultra_error
from ultra_client.progress import ProgressBar

if TYPE_CHECKING:
    from ultra_kit.factory import ServerSpec


VALUE_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def read_value_file(path: Path, what: str = "") -> Any:
    """A value from a file: JSON for ``.json`` (fast for large data), YAML otherwise; same depth limit."""
    with as_ultra_error():
        text = read_text_file(path, what, form="JSON" if path.suffix.lower() == ".json" else "YAML")
    if path.suffix.lower() != ".json":
        try:
            return load_yaml_value(text)
        except ShapeError as exc:
            raise UltraError(f"{path}:{exc.line}: {exc.problem}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            raise UltraError(f"{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    too_deep = UltraError(f"{path}: nested more than {MAX_DEPTH} levels deep")
    try:
        value = json.loads(text)
    except RecursionError:
        raise too_deep from None
    except ValueError as exc:
        raise UltraError(f"{path}: not valid JSON ({exc})") from None
    stack = [(value, 1)]
    while stack:  # the limit of command-line values, checked without recursion
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > MAX_DEPTH:
                raise too_deep
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return value


def read_arguments_file(path: Path) -> dict[str, Any]:
    """``--args-file``: a YAML or JSON mapping of argument name to value."""
    data = read_value_file(path, "arguments")
    if not isinstance(data, dict) or not all(isinstance(key, str) for key in data):
        raise UltraError(f"{path}: --args-file holds a mapping of argument name to value, e.g. {{pred_ls: [...]}}")
    return data


def read_assignments(pairs: list[str]) -> list[tuple[str, Any]]:
    """``key=value`` as (key, value): the value parsed as YAML, or read from FILE for ``key=@FILE.yaml|.yml|.json``."""
    values: list[tuple[str, Any]] = []
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise UltraError(f"argument '{pair}' is not key=value")
        if text.startswith("@") and text.lower().endswith(VALUE_FILE_SUFFIXES):
            try:
                values.append((key, read_value_file(Path(text[1:]).expanduser())))
            except UltraError as exc:
                raise UltraError(f"argument '{key}': {exc}") from None
            continue
        try:
            values.append((key, load_yaml_value(text) if text else ""))
        except ShapeError as exc:
            raise UltraError(f"argument '{key}': {exc.problem}") from None
        except yaml.YAMLError as exc:
            raise UltraError(
                f"argument '{pair}': the value is not valid YAML ({getattr(exc, 'problem', exc)})"
            ) from None
    return values


def parse_assignments(
    pairs: list[str] | list[tuple[str, Any]], info: ToolInfo, base: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``key=value`` (value parsed as YAML); ``setting.sub=value`` edits one key of a mapping setting.

    ``pairs`` may be already read (``read_assignments``); ``base`` (an ``--args-file``) is applied first.
    """
    args: dict[str, Any] = {}
    for name, value in (base or {}).items():
        if name not in info.parameters:
            raise UltraError(f"--args-file: {unknown_names_message([name], info.parameters, owner=info.name)}")
        args[name] = value
    for key, value in [read_assignments([p])[0] if isinstance(p, str) else p for p in pairs]:
        name, _, rest = key.partition(".")
        if name not in info.parameters:
            raise UltraError(unknown_names_message([name], info.parameters, owner=info.name))
        if not rest:
            args[name] = value
            continue
        base = args.get(name, json.loads(json.dumps(info.settings.get(name, {}))))
        if not isinstance(base, dict):
            raise UltraError(f"'{name}' is not a mapping, so '{key}' cannot be set")
        node = base
        parts = rest.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
        args[name] = base
    return args


async def call(
    target: str, pairs: list[str], timeout: float | None, *, stdio: bool = False, args_file: str | None = None
) -> dict[str, Any]:
    """``ultra call server.tool key=value ...``: the tool's structured result.

    A server package that exposes a ``SPEC`` runs the tool in this process (no MCP round trip);
    ``stdio=True``, a ``timeout`` (only a subprocess can be stopped), or a server without ``SPEC``
    start the server over stdio instead. Both give the same result, and on a terminal show the tool's
    progress bar as ``ultra run`` does. ``args_file`` (a YAML or JSON mapping) gives arguments first;
    ``key=value`` pairs apply on top.
    """
    server, _, tool = target.partition(".")
    if not server or not tool:
        raise UltraError(f"'{target}' is not server.tool, e.g. evaluation.evaluate_trec")
    location = locate_named_server(server)
    base = read_arguments_file(Path(args_file).expanduser()) if args_file else {}
    values = read_assignments(pairs)  # files named by key=@FILE are read once, before any server starts
    if not stdio and timeout is None:
        from ultra_kit.inprocess import load_spec

        spec = load_spec(location.module, location.root)
        if spec is not None:
            return await call_in_process(target, spec, values, base)
    from ultra_kit.settings import env_references

    # ${VAR} typed in the arguments (or in their files): the server expands it
    references = {server: env_references([list(pairs), base, [value for _, value in values]])}
    location = dataclasses.replace(location, stdio=True)
    async with scratch_logs("call") as logs, ServerPool([location], logs, references) as pool:
        running = pool.servers[server]
        if tool not in running.tools:
            raise UltraError(f"server '{server}' has no tool '{tool}'; its tools: {sorted(running.tools)}")
        args = parse_assignments(values, running.tools[tool], base)
        bar = terminal_progress(target)
        try:
            result = await call_tool_checked(running.client, tool, args, timeout, bar)
        except ToolRefused as exc:
            raise UltraError(f"{target} failed: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - reported with the server's log
            raise UltraError(pool.describe_failure(server, f"stopped answering ({exc})")) from None
        finally:
            if bar is not None:
                bar.close()
    if result.is_error:
        raise UltraError(f"{target} failed: {result_text(result, ' ').strip()}")
    return structured_result(result)


class ToolCallFailed(UltraError):
    """An in-process tool refused the call; ``reason`` is the tool's own message (without the tool's name)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def terminal_progress(target: str) -> ProgressBar | None:
    """The tool's progress bar when stderr is a terminal; None otherwise, so a script or an agent
    reading ``ultra call``'s stderr gets only its errors."""
    bar = ProgressBar(target)
    return bar if bar.interactive else None


async def call_in_process(
    target: str, spec: ServerSpec, pairs: list[str] | list[tuple[str, Any]], base: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Run ``server.tool`` in this process; its log goes to a scratch file, kept (and named) on a crash."""
    import logging
    import traceback

    from ultra_kit.inprocess import ProgressContext, ToolFailure, call_local_tool, local_tools, tool_names

    server, _, name = target.partition(".")
    tools = local_tools(spec, only=name)
    if name not in tools:
        raise UltraError(f"server '{server}' has no tool '{name}'; its tools: {tool_names(spec)}")
    tool = tools[name]
    info = ToolInfo(tool.name, tool.description, tool.parameters, tool.required, [], tool.settings)
    args = parse_assignments(pairs, info, base)
    async with scratch_logs("call") as logs:
        log_path = logs / f"{log_name(server)}.stderr.log"
        handler = logging.FileHandler(log_path, encoding="utf-8")
        root = logging.getLogger()
        root.addHandler(handler)
        bar = terminal_progress(target)
        try:
            context = None if bar is None else ProgressContext(bar)
            # Ctrl-C or SIGTERM returns at once; the caller then exits, removing the tool's unfinished files
            return await call_local_tool(tool, args, context=context, abandon_on_cancel=True)
        except ToolFailure as exc:
            raise ToolCallFailed(f"{target} failed: {exc}", exc.reason) from None
        except Exception as exc:  # noqa: BLE001 - a crash: the traceback goes to the log
            from ultra_kit.wrapping.errors import ToolCrash, in_process_crash

            handler.stream.write(traceback.format_exc())
            crash = exc if isinstance(exc, ToolCrash) else in_process_crash(type(exc).__name__, str(exc))  # outside it
            message = f"{target} failed: Error executing tool {name}: {crash}"
            raise UltraError(f"{message}\n  (full log: {log_path})") from None
        finally:
            if bar is not None:
                bar.close()
            root.removeHandler(handler)
            handler.close()
