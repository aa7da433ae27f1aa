"""Build an ``MCPServer`` for one server package: settings defaults, error mapping, annotations."""

from __future__ import annotations

import functools
import importlib
import inspect
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ultra_base import redact
from ultra_base.errors import InputError, confine_process_reads, confined_reads
from ultra_base.write_hooks import tool_call
from ultra_kit.files import released_on_failure
from ultra_kit.paths.project_root import absolute_paths
from ultra_kit.paths.read_arguments import check_read_arguments, read_parameters
from ultra_kit.settings import (
    check_key_hosts,
    env_references,
    expand_env,
    load_parameter_file,
    merge_mapping,
    running_server,
    shown_file,
)
from ultra_kit.wrapping.argument_check import ArgumentCheck
from ultra_kit.wrapping.errors import ToolErrors, crash_report, in_process_crash
from ultra_kit.wrapping.pinned import check_pinned
from ultra_kit.wrapping.typed_settings import kind_of, read_typed

if typing.TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__version__ = "0.1.0"

PARAMETER_FILE = "parameter.yaml"


def tool_hints(
    *, read_only: bool = False, idempotent: bool = True, open_world: bool = False, destructive: bool = False
) -> Callable:
    """Decorator recording MCP tool annotations on a tool function (read by ``build_server``).

    ``destructive`` says the tool may change or remove what already exists and it did not create. Most
    tools of this project write only new, reserved files, so it is False unless a tool says otherwise
    (one that writes fixed names in a folder it is given does); MCP's own default, when a tool states
    nothing, is True.
    """

    def mark(fn: Callable) -> Callable:
        fn.__tool_hints__ = {
            "read_only": read_only,
            "idempotent": idempotent,
            "open_world": open_world,
            "destructive": destructive and not read_only,
        }
        return fn

    return mark


OWN_ENV = "__own_env__"  # the attribute ``expands_own_env`` sets on a tool function
OWN_ENV_META = "ultra/expands_own_env"  # the same names in the tool's MCP listing (``_meta``), for ``ultra run``


def expands_own_env(*names: str) -> Callable:
    """Decorator: the tool expands the ``${VAR}`` references of these settings itself, on the path that
    uses them (``ultra_kit.settings.expand_env``), so a call that never uses them needs no variable."""

    def mark(fn: Callable) -> Callable:
        setattr(fn, OWN_ENV, frozenset(names))
        return fn

    return mark


def build_server(
    name: str,
    tools: Sequence[Callable[..., Any]],
    *,
    package_dir: str | Path,
    instructions: str = "",
) -> MCPServer:
    """Create the MCP server ``name`` with ``tools``, defaults taken from ``package_dir/parameter.yaml``.

    A tool parameter whose name is a key of ``parameter.yaml`` is a *setting*: its default in the
    published input schema is the file's value, and ``${VAR}`` references in it are expanded from
    the environment when the tool is called. ``InputError`` (and ``FileNotFoundError``) raised by
    a tool reach the caller as ``ToolError`` with the same message; any other exception reaches
    it as ``ToolError`` naming its type and message and where the traceback was logged. Values of
    ``${VAR}`` never reach the caller (``ultra_base.redact``). Serving stdio installs the
    lifeline (``ultra_kit.lifeline``) and answers unreadable lines (``ultra_kit.serving``).
    """
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    from ultra_kit.serving import server_class

    settings = load_parameter_file(Path(package_dir) / PARAMETER_FILE)
    redact.remember_environment(env_references(settings) | redact.secret_names_from_environment())
    app = server_class()(name, version=__version__, instructions=instructions or None)
    app.argument_checks = {}  # tool name -> ArgumentCheck, applied by the server class before the SDK validates
    app.typed_settings = {}  # tool name -> {setting: int/float/bool}: a ${VAR} read as its kind before validation
    for fn in tools:
        hints = getattr(fn, "__tool_hints__", None) or tool_hints()(lambda: None).__tool_hints__
        annotations = ToolAnnotations(
            read_only_hint=hints["read_only"],
            destructive_hint=hints["destructive"],
            idempotent_hint=hints["idempotent"],
            open_world_hint=hints["open_world"],
        )
        tool = with_settings(
            fn,
            settings,
            context_type=Context,
            raise_as=ToolError,
            crash_as=crash_report(ToolError),
            parameter_file=Path(package_dir) / PARAMETER_FILE,
        )
        own_env = sorted(getattr(fn, OWN_ENV, ()))
        app.add_tool(tool, name=fn.__name__, annotations=annotations, meta={OWN_ENV_META: own_env} if own_env else None)
        app.argument_checks[fn.__name__] = tool.__argument_check__
        app.typed_settings[fn.__name__] = tool.__typed_settings__
    return app


@dataclass(frozen=True)
class ServerSpec:
    """What ``build_server`` needs, importable without MCP so ``ultra call`` can run a tool in-process.

    ``load_tools`` imports the tool modules (which import no MCP at module level) and returns the
    tool functions; ``create_app`` builds the MCP server from them. It may be a generator that
    imports each module just before yielding its tools, so ``ultra call`` imports only the modules
    up to the one that holds the tool it calls.

    ``doc_tables`` names the server's registry tables that the docs show (``{"judges":
    "servers.judge.answers.registry:registry_markdown"}``: a function of the package returning
    Markdown); the card generator reaches them through ``doc_table``, never by importing the package.
    ``metric_directions``: functions returning ``{metric: higher_is_better}`` from the registries (read by
    ``ultra_client.gates.direction``). ``heavy_imports``: libraries its tools import on first use, which
    ``ultra sweep --workers N`` imports once before it forks its workers, so that each does not import them
    again (one not installed is skipped).
    """

    name: str
    package_dir: Path
    load_tools: Callable[[], Iterable[Callable[..., Any]]]
    instructions: str = ""
    doc_tables: Mapping[str, str] = field(default_factory=dict)
    setting_checks: Mapping[str, str] = field(default_factory=dict)  # setting -> "module:function" (ultra build)
    metric_directions: tuple[str, ...] = ()  # "module:function"s; a metric none names is higher-is-better
    heavy_imports: tuple[str, ...] = ()  # modules: imported before a sweep forks its workers

    def create_app(self) -> MCPServer:
        """The MCP server with every tool."""
        return build_server(
            self.name, list(self.load_tools()), package_dir=self.package_dir, instructions=self.instructions
        )

    def main(self) -> None:
        """Serve every tool over stdio (what ``python -m servers.<name>`` runs); tools read only inside the
        read roots, in every thread (``ultra_base.errors.readable_path``)."""
        confine_process_reads()
        self.create_app().run()

    def doc_table(self, name: str) -> str:
        """The Markdown of the registry table ``name`` (one of ``doc_tables``)."""
        return named_function(self.doc_tables[name])()

    def directions(self) -> dict[str, bool]:
        """``{metric: higher_is_better}`` of every metric the server's registries declare (``metric_directions``)."""
        return {name: bool(up) for ref in self.metric_directions for name, up in named_function(ref)().items()}

    def settings(self) -> dict[str, Any]:
        """The defaults from the package's ``parameter.yaml``."""
        return load_parameter_file(self.package_dir / PARAMETER_FILE)


def named_function(reference: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` reference names, its module imported on first use."""
    module, _, function = reference.partition(":")
    return getattr(importlib.import_module(module), function)


def tool_modules(package: str, *modules: str) -> Callable[[], Iterator[Callable[..., Any]]]:
    """A ``ServerSpec.load_tools``: the ``TOOLS`` of each ``<package>.<module>``, each module imported just
    before its tools are yielded (so ``ultra call`` imports only the modules up to the one it needs)."""

    def load_tools() -> Iterator[Callable[..., Any]]:
        for module in modules:
            yield from importlib.import_module(f"{package}.{module}").TOOLS

    return load_tools


def tool_settings(fn: Callable[..., Any], settings: dict[str, Any]) -> dict[str, Any]:
    """The settings among ``fn``'s parameters, with their ``parameter.yaml`` defaults."""
    return {name: settings[name] for name in inspect.signature(fn).parameters if name in settings}


def with_settings(
    fn: Callable[..., Any],
    settings: dict[str, Any],
    *,
    context_type: type,
    raise_as: Callable[[str], Exception],
    crash_as: Callable[[str, str], Exception] | None = None,
    parameter_file: str | Path = PARAMETER_FILE,
    in_process: bool = False,
) -> Callable[..., Any]:
    """Wrap ``fn`` so its settings default to ``settings`` and a user's mistakes become ``raise_as(message)``.

    Any other exception is logged with its traceback and raised as ``crash_as(type_name, message)``
    (``ToolCrash(message)`` if None). The values of ``${VAR}`` references (expanded here, unless the
    tool expands a setting itself: ``expands_own_env``; or known as secrets) are replaced by ``***``
    in the result and in error messages (``ultra_kit.files`` redacts what it writes).

    A mapping setting given in part takes the keys it leaves out from ``settings``
    (``ultra_kit.settings.merge_mapping``: one level deep, the api_key rule). A result value
    under a key ``path``, ``*_path`` or ``*_paths`` naming an existing file or folder by a relative
    path is returned absolute. ``tool.__argument_check__`` (an ``ArgumentCheck``) rejects unknown
    arguments; the callers apply it to the raw arguments (the SDK drops unknown ones unseen). During the call
    the defaults and caps the tool reads are those of ``parameter_file`` (``ultra_kit.settings.running_server``).

    The wrapper has keyword-only parameters with resolved annotations, so the MCP SDK derives the
    same input schema as for ``fn`` except for the defaults. Tool modules import ``Context`` only
    for type checking; ``context_type`` is what the name ``Context`` in their annotations means
    (the SDK's class for a server, a placeholder for an in-process call).
    """
    hints = typing.get_type_hints(fn, localns={"Context": context_type}, include_extras=True)
    signature = inspect.signature(fn)
    parameters = []
    for param in signature.parameters.values():
        default = settings.get(param.name, param.default)
        parameters.append(
            param.replace(
                kind=inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=hints.get(param.name, param.annotation),
            )
        )
    setting_names = {name for name in signature.parameters if name in settings}
    own_env = getattr(fn, OWN_ENV, frozenset())  # expanded by the tool itself (expands_own_env)
    pins = getattr(fn, "__pinned__", {})  # keys only a parameter file may set (ultra_kit.wrapping.pinned)
    reads = read_parameters(signature.parameters, settings)  # input paths: checked before the tool starts
    kinds = {name: kind for name in setting_names if (kind := kind_of(hints.get(name)))}  # top_k: ${TOP_K} read as int

    source = shown_file(parameter_file)

    def prepare(kwargs: dict[str, Any]) -> dict[str, Any]:
        given = {key: value for key, value in kwargs.items() if key in setting_names}
        check_key_hosts(given, settings, source=source, in_process=in_process)
        check_pinned(given, pins, settings, source=source, in_process=in_process)
        return {key: _prepared(key, value) if key in setting_names else value for key, value in kwargs.items()}

    def _prepared(key: str, value: Any) -> Any:
        if key in kinds:  # a default of parameter.yaml written ${VAR} (a caller's was read before validation)
            try:
                value = read_typed(value, kinds[key], setting=key)
            except InputError as exc:
                raise InputError(str(exc), path=source) from None
        merged = _merged(key, value)
        return merged if key in own_env else expand_env(merged)

    def _merged(key: str, value: Any) -> Any:
        default = settings[key]
        if isinstance(default, dict) and isinstance(value, dict):
            return merge_mapping(default, value)
        return value

    def finish(result: Any) -> Any:
        result = absolute_paths(result)
        return redact.redact(result) if redact.active() else result

    errors = functools.partial(ToolErrors, fn.__name__, raise_as, crash_as or in_process_crash)
    if inspect.iscoroutinefunction(fn):

        async def tool(**kwargs: Any) -> Any:
            with errors(), running_server(parameter_file), released_on_failure(), confined_reads(), tool_call():
                return finish(await fn(**check_read_arguments(prepare(check_read_arguments(kwargs, reads)), reads)))
    else:

        def tool(**kwargs: Any) -> Any:
            with errors(), running_server(parameter_file), released_on_failure(), confined_reads(), tool_call():
                return finish(fn(**check_read_arguments(prepare(check_read_arguments(kwargs, reads)), reads)))

    functools.update_wrapper(tool, fn, assigned=("__module__", "__name__", "__qualname__", "__doc__"), updated=())
    tool.__signature__ = signature.replace(
        parameters=parameters, return_annotation=hints.get("return", signature.return_annotation)
    )
    tool.__annotations__ = dict(hints)
    tool.__argument_check__ = ArgumentCheck.of(fn.__name__, parameters, hints, context_type)
    tool.__typed_settings__ = kinds  # read before validation by the callers (ultra_kit.wrapping.typed_settings)
    return tool
