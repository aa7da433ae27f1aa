"""Call a server's tool in this process, as its MCP server would, without importing the MCP SDK.

``ultra call`` uses this for one-shot calls: starting a server subprocess and importing the SDK
twice (client and server) costs about two seconds, more than many tools take. Everything that
decides the result is shared with the MCP server: the tool function, its ``parameter.yaml``
defaults and ``${VAR}`` expansion (``with_settings``), and the mapping of a user's mistakes to an
error message. What the SDK does around the call is mirrored here with pydantic, as the SDK does
it: arguments are validated against a model built from the signature (JSON text given for a
non-string parameter is parsed first), and the return value is validated and dumped in JSON mode
against its annotation (wrapped as ``{"result": ...}`` unless it is a TypedDict, a model or a
``dict[str, ...]``). Tests check that both paths give the same output.

A ``Context`` parameter receives ``None``, or a ``ProgressContext`` that hands the tool's progress
reports to a callback (``ultra run`` draws its progress bar with it). Sync tools run in a worker
thread, as under the SDK; ``abandon_on_cancel`` lets a caller's timeout return while such a thread
is still busy (it cannot be stopped: ``running_threads`` counts them, and the caller must exit).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import sys
import threading
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError
from ultra_kit.factory import OWN_ENV, PARAMETER_FILE, ServerSpec, named_function, with_settings
from ultra_kit.wrapping.typed_settings import read_arguments


class ToolFailure(Exception):
    """A tool call that failed on the user's input (the message is what the MCP client would show).

    ``reason``: the message without the ``Error executing tool <name>:`` prefix.
    """

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = message if reason is None else reason


class NoContext:
    """Stands for ``Context`` in tool annotations during an in-process call (the argument is None)."""


@dataclass
class LocalTool:
    """A tool ready to be called in-process: the wrapped function and what its MCP listing would show."""

    name: str
    description: str
    function: Callable[..., Any]
    parameters: list[str]
    required: set[str]
    settings: dict[str, Any]
    context_parameters: list[str]
    outputs: list[str]
    required_outputs: set[str]
    outputs_from: str | dict[str, Any] | None  # the result type's OUTPUTS_FROM entry
    own_env: frozenset[str] = frozenset()  # settings whose ${VAR} the tool expands on use (factory.expands_own_env)


# In a result type's JSON schema (``json_schema_extra``): how a tool's outputs follow from its settings.
# Either "setting.key": the outputs are the keys of that mapping setting (get_data's ``benchmark.key_map``);
# or {output: {"keys": "module:function", "settings": [setting, ...]}}: the keys of that mapping output
# are what the function (in a library, not a server) returns for those settings, as keyword arguments.
OUTPUTS_FROM = "x-outputs-from"


def output_keys(outputs_from: Any, output: str, settings: dict[str, Any]) -> list[str] | None:
    """The keys the mapping ``output`` will hold, when the tool's ``OUTPUTS_FROM`` says how they follow from
    ``settings`` (values by setting name); None when it does not say, or a setting it needs is missing.

    The function may raise the tool's own error for settings the tool would refuse (InputError,
    TypeError, ValueError); the caller decides whether that matters before the tool runs.
    """
    rule = outputs_from.get(output) if isinstance(outputs_from, dict) else None
    if not isinstance(rule, dict) or not isinstance(rule.get("keys"), str):
        return None
    module, _, function = rule["keys"].partition(":")
    needed = list(rule.get("settings") or [])
    if module.split(".")[0] == "servers" or not function or any(name not in settings for name in needed):
        return None  # a server's modules are its own: the function lives in a library
    try:
        compute = named_function(rule["keys"])
    except (ImportError, AttributeError):  # e.g. a stdio server whose library this Python does not have
        return None
    return [str(key) for key in compute(**{name: settings[name] for name in needed})]


class ProgressContext:
    """Stands in for the SDK's ``Context`` in an in-process call: ``report_progress`` goes to ``callback``."""

    def __init__(self, callback: Callable[[float, float | None, str | None], Any]) -> None:
        self.callback = callback

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        await self.callback(progress, total, message)


_busy_lock = threading.Lock()
_busy_threads = 0  # sync tools still running in worker threads (after a timeout abandoned them too)


def running_threads() -> int:
    """How many sync tools are running in worker threads right now."""
    return _busy_threads


def load_spec(module: str, root: Path) -> ServerSpec | None:
    """The ``SPEC`` of a server package (``module`` as run with ``python -m``), or None if it has none
    or cannot be imported here.

    ``root`` (the folder holding the top-level package) is put on ``sys.path`` first.
    """
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    name = module if module.endswith(".server") else f"{module}.server"
    try:
        server_module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a module that fails to import is started as a subprocess, whose log shows why
        return None
    spec = getattr(server_module, "SPEC", None)
    return spec if isinstance(spec, ServerSpec) else None


def local_tools(spec: ServerSpec, only: str | None = None) -> dict[str, LocalTool]:
    """Every tool of ``spec``, wrapped with its settings exactly as ``build_server`` wraps it.

    ``only``: just that tool (an empty dict if the server has none by that name); the tool modules
    after the one that holds it are not imported.
    """
    settings = spec.settings()
    tools: dict[str, LocalTool] = {}
    for fn in spec.load_tools():
        if only is not None and fn.__name__ != only:
            continue
        wrapped = with_settings(
            fn,
            settings,
            context_type=NoContext,
            raise_as=ToolFailure,
            parameter_file=spec.package_dir / PARAMETER_FILE,
            in_process=True,  # the user's own call: a key sent to another host is a warning, not a refusal
        )
        signature = inspect.signature(wrapped)
        context = [name for name, param in signature.parameters.items() if _is_context(param.annotation)]
        parameters = [name for name in signature.parameters if name not in context]
        tools[fn.__name__] = LocalTool(
            name=fn.__name__,
            description=inspect.getdoc(fn) or "",
            function=wrapped,
            parameters=parameters,
            required={n for n in parameters if signature.parameters[n].default is inspect.Parameter.empty},
            settings={n: settings[n] for n in parameters if n in settings},
            context_parameters=context,
            outputs=output_names(signature.return_annotation),
            required_outputs=_required_keys(signature.return_annotation),
            outputs_from=_schema_extra(signature.return_annotation).get(OUTPUTS_FROM),
            own_env=getattr(fn, OWN_ENV, frozenset()),
        )
        if only is not None:
            break
    return tools


def _plain(annotation: Any) -> Any:
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation


def _required_keys(annotation: Any) -> set[str]:
    """The keys every result has (a TypedDict's required keys), as the output schema's ``required`` lists.

    Read from the resolved hints: with ``from __future__ import annotations`` a TypedDict's own
    ``__required_keys__`` cannot see ``NotRequired``.
    """
    import typing_extensions

    plain = _plain(annotation)
    if not typing_extensions.is_typeddict(plain):
        return set()
    total = getattr(plain, "__total__", True)
    required = set()
    for key, hint in typing.get_type_hints(plain, include_extras=True).items():
        origin = typing.get_origin(hint)
        explicit = origin in (typing_extensions.Required, getattr(typing, "Required", None))  # typing's: 3.11+
        optional = origin in (typing_extensions.NotRequired, getattr(typing, "NotRequired", None))
        if explicit or (total and not optional):
            required.add(key)
    return required


def _schema_extra(annotation: Any) -> dict[str, Any]:
    """``json_schema_extra`` of a result type's pydantic config (``with_config``), if it is a mapping."""
    config = getattr(_plain(annotation), "__pydantic_config__", None) or {}
    extra = config.get("json_schema_extra") if isinstance(config, dict) else None
    return extra if isinstance(extra, dict) else {}


def output_names(annotation: Any) -> list[str]:
    """The properties of the output schema the MCP SDK publishes for a return annotation (in its order).

    A TypedDict, a model or an annotated class has its fields; ``dict[str, ...]`` and a class without
    annotations have none; anything else is wrapped as ``{"result": ...}``.
    """
    import typing_extensions

    if annotation is inspect.Signature.empty:
        return []
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is dict:
        return [] if typing.get_args(annotation)[:1] == (str,) else ["result"]
    if not isinstance(annotation, type) or annotation in (str, int, float, bool, bytes, type(None)):
        return ["result"]
    if typing_extensions.is_typeddict(annotation):
        return list(typing.get_type_hints(annotation))
    import pydantic

    if issubclass(annotation, pydantic.BaseModel):
        return [field.alias or key for key, field in annotation.model_fields.items()]
    try:
        return [key for key in typing.get_type_hints(annotation) if not key.startswith("_")]
    except Exception:  # noqa: BLE001 - unresolvable hints: no structured output, as in the SDK
        return []


async def call_local_tool(
    tool: LocalTool, arguments: dict[str, Any], *, context: Any = None, abandon_on_cancel: bool = False
) -> dict[str, Any]:
    """Validate ``arguments``, call the tool, and return its structured result.

    ``context`` (e.g. a ``ProgressContext``) is passed for the tool's ``Context`` parameter.
    ``abandon_on_cancel``: a cancelled call returns at once even if a sync tool's thread runs on.
    Raises ToolFailure with the message an MCP client would receive for unknown or invalid arguments or a
    user's mistake inside the tool; any other exception is a crash and propagates.
    """
    import pydantic

    check = getattr(tool.function, "__argument_check__", None)  # unknown names, as the MCP server rejects them
    problem = check.problem(arguments) if check is not None else None
    if problem:
        raise ToolFailure(f"Error executing tool {tool.name}: {problem}", problem)
    try:  # top_k: ${TOP_K} read as the int its variable holds, as the MCP server reads it (ultra_kit.serving)
        arguments = read_arguments(arguments, getattr(tool.function, "__typed_settings__", {}))
    except InputError as exc:
        raise ToolFailure(f"Error executing tool {tool.name}: {exc}", str(exc)) from None
    model = _argument_model(tool)
    try:
        validated = model.model_validate(_pre_parse_json(model, arguments))
    except pydantic.ValidationError as exc:
        from ultra_kit.validation import describe_errors

        sentence = describe_errors(exc.errors(), model.model_json_schema(), arguments)
        raise ToolFailure(f"Error executing tool {tool.name}: {sentence}", sentence) from None
    kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
    kwargs |= dict.fromkeys(tool.context_parameters, context)
    try:
        if inspect.iscoroutinefunction(tool.function):
            result = await tool.function(**kwargs)
        else:  # in a worker thread, as the SDK runs sync tools (they may start an event loop of their own)
            import anyio.to_thread

            function = functools.partial(_counted, functools.partial(tool.function, **kwargs))
            result = await anyio.to_thread.run_sync(function, abandon_on_cancel=abandon_on_cancel)
    except ToolFailure as exc:
        raise ToolFailure(f"Error executing tool {tool.name}: {exc}", str(exc)) from None
    return _structured(tool, result)


def _counted(function: Callable[[], Any]) -> Any:
    global _busy_threads
    with _busy_lock:
        _busy_threads += 1
    try:
        return function()
    finally:
        with _busy_lock:
            _busy_threads -= 1


def tool_names(spec: ServerSpec) -> list[str]:
    """The names of every tool of ``spec``, sorted."""
    return sorted(fn.__name__ for fn in spec.load_tools())


def _is_context(annotation: Any) -> bool:
    if annotation is NoContext:
        return True
    return NoContext in typing.get_args(annotation)


def input_schema(tool: LocalTool) -> dict[str, Any]:
    """The JSON schema of the tool's arguments, as its MCP listing publishes it (``inputSchema``)."""
    return _argument_model(tool).model_json_schema()


def _argument_model(tool: LocalTool) -> type:
    """A pydantic model of the tool's parameters (as the SDK builds one), named ``<tool>Arguments``."""
    import pydantic

    signature = inspect.signature(tool.function)
    fields: dict[str, Any] = {}
    for name in tool.parameters:
        param = signature.parameters[name]
        annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (annotation, default)
    config = pydantic.ConfigDict(arbitrary_types_allowed=True)
    return pydantic.create_model(f"{tool.name}Arguments", __config__=config, **fields)


def _pre_parse_json(model: type, arguments: dict[str, Any]) -> dict[str, Any]:
    """JSON text given for a non-string parameter becomes the list or object it spells (as in the SDK)."""
    parsed = dict(arguments)
    for name, value in arguments.items():
        field = model.model_fields.get(name)
        if field is None or not isinstance(value, str) or field.annotation is str:
            continue
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            continue
        if not isinstance(decoded, str | int | float):
            parsed[name] = decoded
    return parsed


def _structured(tool: LocalTool, result: Any) -> dict[str, Any]:
    """What ``ultra call`` prints for ``result``: the SDK's structured content for the return annotation.

    A TypedDict, a model or ``dict[str, ...]`` is validated and dumped as is; other annotated
    types are wrapped as ``{"result": ...}``; a class without field annotations (bare ``dict``) or
    no annotation gets no structured content from the SDK, so the client reads the JSON text:
    a mapping as is, anything else wrapped.
    """
    import pydantic
    import typing_extensions

    annotation = inspect.signature(tool.function).return_annotation
    plain = typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation
    stdlib_typeddict = typing_extensions.is_typeddict(plain) and type(plain).__module__ == "typing"
    if sys.version_info < (3, 12) and stdlib_typeddict:
        # pydantic cannot read a typing.TypedDict below 3.12 (the SDK rebuilds it); dump the data as is
        return pydantic.TypeAdapter(Any).dump_python(result, mode="json")
    if annotation is inspect.Signature.empty or (
        isinstance(plain, type) and not typing_extensions.is_typeddict(plain) and _unstructured_class(plain)
    ):
        value = pydantic.TypeAdapter(Any).dump_python(result, mode="json")
        return value if isinstance(value, dict) else {"result": value}
    is_model = isinstance(plain, type) and issubclass(plain, pydantic.BaseModel)
    unwrapped = typing_extensions.is_typeddict(plain) or is_model
    if typing.get_origin(plain) is dict:
        unwrapped = typing.get_args(plain)[:1] == (str,)
    if not unwrapped:
        annotation, result = dict[str, annotation], {"result": result}
    adapter = pydantic.TypeAdapter(annotation)
    return adapter.dump_python(adapter.validate_python(result), mode="json", by_alias=True)


def _unstructured_class(cls: type) -> bool:
    """True for a class the SDK cannot describe: not a model or primitive, and without field annotations."""
    import pydantic

    if issubclass(cls, pydantic.BaseModel) or cls in (str, int, float, bool, bytes, type(None)):
        return False
    try:
        return not typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - unresolvable hints: the SDK gives up too
        return True
