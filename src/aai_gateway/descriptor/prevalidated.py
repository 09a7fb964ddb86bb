"""The canonical models a dialect's `normalize` makes most of, from values its raw model has
already validated: without pydantic validating each of them a second time.

A first start normalizes thousands of files, each with a tool and often a call per operation: a
model's validation was a third of `normalize` (~30,000 instructions for a `Tool`, of which the
checks of values typed already are nearly all). Each function here takes every field of its model
(the dialects' call sites say each default they mean) and does what the model's validation would
change of such values: text passes `shown_text` (`ShownText`, `OneLine`), and a field whose
default is made per model gets its own. The values must be of the field's type already; a type
the raw models do not guarantee is a mistake of the call site, not something this checks.

`tests/descriptor/test_prevalidated.py` holds these functions to their models: the same fields,
no validators but the ones applied here, and equal models for the same values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

from .model import (
    AppDescriptor,
    Call,
    Channel,
    DbusCall,
    Dialect,
    HttpCall,
    HttpMethod,
    JsonObject,
    McpChannel,
    PlatformSection,
    Source,
    Tool,
    ToolAnnotations,
)
from .model_auth import McpValue
from .names import LocalizedName
from .platforms import ExecutionType, Platform
from .shown_text import one_line_text, shown_text

_Model = TypeVar("_Model", bound=BaseModel)
_new = object.__new__


def _slot_setter(name: str) -> Callable[[BaseModel, Any], None]:
    """The setter of a slot every model has (its descriptor's, on `BaseModel`): half the cost of
    `object.__setattr__`, which looks the slot up by name on each call."""
    setter: Callable[[BaseModel, Any], None] = vars(BaseModel)[name].__set__
    return setter


_set_dict = _slot_setter("__dict__")
_set_fields_set = _slot_setter("__pydantic_fields_set__")
_set_extra = _slot_setter("__pydantic_extra__")
_set_private = _slot_setter("__pydantic_private__")


def _made(cls: type[_Model], values: dict[str, Any]) -> _Model:
    """What pydantic's `model_construct` makes of `values` (every field, in the model's order),
    without its walk over the model's fields and aliases."""
    model = _new(cls)
    _set_dict(model, values)
    _set_fields_set(model, set(values))
    _set_extra(model, None)  # extra="forbid": what validation leaves too
    _set_private(model, None)
    return model


def tool(
    *,
    name: str,
    description: str,
    parameters: JsonObject,
    returns: JsonObject | None,
    annotations: ToolAnnotations | None,
    channel: Channel,
    call: Call | None,
    timeout_ms: int | None,
) -> Tool:
    """`Tool(...)`. `parameters` and `returns` are the raw model's own dicts (validation copies
    them, and nothing else holds the raw model's)."""
    return _made(
        Tool,
        {
            "name": name,
            "description": shown_text(description),
            "parameters": parameters,
            "returns": returns,
            "annotations": annotations,
            "channel": channel,
            "call": call,
            "timeout_ms": timeout_ms,
        },
    )


class FileOperation(Protocol):
    """An operation of dialect A or B as its raw model holds it."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str | None: ...
    @property
    def parameters(self) -> JsonObject: ...
    @property
    def returns(self) -> JsonObject | None: ...


def file_tool(raw: FileOperation, *, channel: Channel, call: Call | None, timeout_ms: int | None) -> Tool:
    """`tool(...)` of a dialect A or B operation: its own name, description, parameters and
    returns, and no annotations (those dialects have none)."""
    return tool(
        name=raw.name,
        description=raw.description or "",
        parameters=raw.parameters,
        returns=raw.returns,
        annotations=None,
        channel=channel,
        call=call,
        timeout_ms=timeout_ms,
    )


def tool_annotations(
    *,
    title: str | None,
    read_only_hint: bool | None,
    destructive_hint: bool | None,
    idempotent_hint: bool | None,
    open_world_hint: bool | None,
) -> ToolAnnotations:
    """`ToolAnnotations(...)`: the title on one line (`OneLine`)."""
    return _made(
        ToolAnnotations,
        {
            "title": None if title is None else one_line_text(title),
            "read_only_hint": read_only_hint,
            "destructive_hint": destructive_hint,
            "idempotent_hint": idempotent_hint,
            "open_world_hint": open_world_hint,
        },
    )


def localized_name(*, names: dict[str, str], default_lang: str) -> LocalizedName:
    """`LocalizedName(...)`: each name on one line (`OneLine`), in a dict of its own."""
    return _made(
        LocalizedName,
        {"names": {tag: one_line_text(name) for tag, name in names.items()}, "default_lang": default_lang},
    )


def mcp_channel(
    *,
    command: str | None,
    args: tuple[str, ...],
    env: dict[str, McpValue],
    cwd: str | None,
    url: str | None,
    headers: dict[str, McpValue],
    timeout_ms: int | None,
) -> McpChannel:
    """`McpChannel(...)`, its transport rule checked as validation checks it (`model_post_init`:
    a ValueError when broken, which the dialect's checks have ruled out)."""
    made = _made(
        McpChannel,
        {
            "type": ExecutionType.MCP,
            "command": command,
            "args": args,
            "env": env,
            "cwd": cwd,
            "url": url,
            "headers": headers,
            "timeout_ms": timeout_ms,
        },
    )
    made.model_post_init(None)
    return made


def http_call(*, path: str | None, method: HttpMethod | None, headers: dict[str, str]) -> HttpCall:
    """`HttpCall(path=..., method=..., headers=...)`, the call of dialects A and C."""
    return _made(
        HttpCall,
        {
            "kind": "http",
            "path": path,
            "method": method,
            "headers": headers,
            "body": None,
            "query_params": {},
            "output_parser": None,
        },
    )


def dbus_call(
    *,
    method: str,
    output_parser: Literal["json", "string"] | None,
    signature: str | None,
    args: tuple[str, ...],
) -> DbusCall:
    """`DbusCall(...)`, the call of dialect B's Linux operations."""
    return _made(
        DbusCall,
        {
            "kind": "dbus",
            "method": method,
            "output_parser": output_parser,
            "signature": signature,
            "args": args,
        },
    )


def source(*, kind: Literal["file", "bundled"], location: str) -> Source:
    """`Source(kind=..., location=...)` of a file found on this machine: one per file read."""
    return _made(Source, {"kind": kind, "location": location, "origin": None})


def section(
    *, platform: Platform, declared_type: str, channel: Channel, tools: tuple[Tool, ...]
) -> PlatformSection:
    """`PlatformSection(...)`."""
    return _made(
        PlatformSection,
        {"platform": platform, "declared_type": declared_type, "channel": channel, "tools": tools},
    )


def app(
    *,
    dialect: Dialect,
    schema_version: str,
    version: str,
    declared_version: str,
    id: str,
    names: LocalizedName,
    description: str,
    aliases: tuple[str, ...],
    sections: tuple[PlatformSection, ...],
    platform: Platform | None,
    tools: tuple[Tool, ...],
    tools_declared: bool,
    source: Source,
) -> AppDescriptor:
    """`AppDescriptor(...)` of a file: its tools are its own (`server_tools_read` False)."""
    return _made(
        AppDescriptor,
        {
            "dialect": dialect,
            "schema_version": schema_version,
            "version": version,
            "declared_version": declared_version,
            "id": id,
            "names": names,
            "description": one_line_text(description),
            "aliases": tuple([one_line_text(alias) for alias in aliases]),
            "sections": sections,
            "platform": platform,
            "tools": tools,
            "tools_declared": tools_declared,
            "server_tools_read": False,
            "source": source,
        },
    )
