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

A ``Context`` parameter receives ``None``: in-process calls report no progress. Sync tools run in
a worker thread, as under the SDK.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers.core.factory import ServerSpec, with_settings


class ToolFailure(Exception):
    """A tool call that failed on the user's input (the message is what the MCP client would show)."""


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


def local_tools(spec: ServerSpec) -> dict[str, LocalTool]:
    """Every tool of ``spec``, wrapped with its settings exactly as ``build_server`` wraps it."""
    settings = spec.settings()
    tools: dict[str, LocalTool] = {}
    for fn in spec.load_tools():
        wrapped = with_settings(fn, settings, context_type=NoContext, raise_as=ToolFailure)
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
        )
    return tools


async def call_local_tool(tool: LocalTool, arguments: dict[str, Any]) -> dict[str, Any]:
    """Validate ``arguments``, call the tool, and return its structured result.

    Raises ToolFailure with the message an MCP client would receive for unknown or invalid arguments or a
    user's mistake inside the tool; any other exception is a crash and propagates.
    """
    import pydantic

    check = getattr(tool.function, "__argument_check__", None)  # unknown names, as the MCP server rejects them
    problem = check.problem(arguments) if check is not None else None
    if problem:
        raise ToolFailure(f"Error executing tool {tool.name}: {problem}")
    model = _argument_model(tool)
    try:
        validated = model.model_validate(_pre_parse_json(model, arguments))
    except pydantic.ValidationError as exc:
        from servers.core.validation import describe_errors

        sentence = describe_errors(exc.errors(), model.model_json_schema(), arguments)
        raise ToolFailure(f"Error executing tool {tool.name}: {sentence}") from None
    kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
    kwargs |= dict.fromkeys(tool.context_parameters)
    try:
        if inspect.iscoroutinefunction(tool.function):
            result = await tool.function(**kwargs)
        else:  # in a worker thread, as the SDK runs sync tools (they may start an event loop of their own)
            import anyio.to_thread

            result = await anyio.to_thread.run_sync(functools.partial(tool.function, **kwargs))
    except ToolFailure as exc:
        raise ToolFailure(f"Error executing tool {tool.name}: {exc}") from None
    return _structured(tool, result)


def _is_context(annotation: Any) -> bool:
    if annotation is NoContext:
        return True
    return NoContext in typing.get_args(annotation)


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
