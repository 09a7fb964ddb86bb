"""What the gateway keeps of every app, loaded or not: its card.

A descriptor in full (every schema, every binding) is ~30 KB of objects and takes ~0.4 ms to
parse and check. With thousands of apps the gateway cannot hold, nor at each start rebuild, them
all; yet tools/list, resolving a reference, listing and search concern every app. An `AppCard`
holds exactly what those need: the app's identity (id, names, description, aliases, version,
source), its operations' names, the origins of its HTTP APIs, and per group of operations what
decides whether they can run here (`OperationRun`). The texts search indexes (`OperationText`)
come apart, when an index is built. The full `AppDescriptor` is loaded from its file when an app
is used (a guide, an execution): a card never runs anything.

Cards travel as JSON records (`card_records.py`) in the persistent descriptor cache
(`discovery/card_cache.py`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, TypeAdapter

from .binding import Binding
from .mcp_tools import server_probe
from .model import AppDescriptor, Call, Channel, HttpCall, HttpChannel, Tool
from .names import LocalizedName
from .origin import url_origin
from .platforms import Platform

STAND_IN_PARAMETERS: dict[str, Any] = {"type": "object"}
SourceKind = Literal["file", "web", "bundled", "inline"]
_CHANNEL: TypeAdapter[Channel] = TypeAdapter(Channel)
_CALL: TypeAdapter[Call] = TypeAdapter(Call)


class AppIdentity(Protocol):
    """What names and describes an app: an `AppCard` and an `AppDescriptor` both have it."""

    @property
    def id(self) -> str: ...

    @property
    def names(self) -> LocalizedName: ...

    @property
    def all_names(self) -> tuple[str, ...]: ...

    @property
    def description(self) -> str: ...

    @property
    def aliases(self) -> tuple[str, ...]: ...

    @property
    def binding(self) -> Binding: ...


# Cards, runs, loads and catalog entries are never changed once made, but are not `frozen`: a
# start makes ten thousand of each, and a frozen dataclass's __init__ costs three times as much.
@dataclass(slots=True, unsafe_hash=True)
class OperationRun:
    """What decides whether an operation can run here: its channel and its call's kind (executors
    look at nothing else, see `Executor.unavailable_reason`). Operations that share these share
    the answer; `call` is the first such operation's call, as JSON."""

    execution: str  # the channel's execution type
    channel: str  # the channel as JSON (`model_dump_json`)
    call: str | None
    call_kind: str | None = None

    @property
    def key(self) -> tuple[str, str | None]:
        """What an executor's answer depends on (`call` stands for every call of its kind)."""
        return (self.channel, self.call_kind)

    def stand_in(self, name: str) -> Tool:
        """A tool with this run's channel and call, to ask an executor about."""
        return Tool(
            name=name,
            parameters=STAND_IN_PARAMETERS,
            channel=_CHANNEL.validate_json(self.channel),
            call=None if self.call is None else _CALL.validate_json(self.call),
        )


@dataclass(frozen=True, slots=True)
class ApiOrigin:
    """Where an HTTP channel sends requests: `("https", "api.example.com", 443)`."""

    scheme: str
    host: str
    port: int


@dataclass(slots=True)
class AppCard:
    """Plain data, no pydantic model: a start with thousands of apps makes thousands of these
    (never changed once made). `names` is the descriptor's model, made when first asked for."""

    id: str
    name_map: dict[str, str]
    default_lang: str
    all_names: tuple[str, ...]
    """Every distinct name, the default first (`LocalizedName.all_names`)."""
    description: str
    aliases: tuple[str, ...]
    version: str
    source_kind: SourceKind
    location: str
    origin: str | None
    binding: Binding
    platform: Platform | None
    tools_declared: bool
    server_tools_read: bool
    operations: tuple[str, ...]
    """The names of the app's operations (`AppDescriptor.tools`), in order."""
    operation_runs: tuple[int, ...]
    """Per operation, the index of its run in `runs`."""
    runs: tuple[OperationRun, ...]
    server_run: OperationRun | None
    """An app whose operations are its MCP server's, not read yet: its server's run."""
    api_origins: tuple[ApiOrigin, ...]
    key: tuple[str, str] = field(init=False)
    """(binding, id): what names this app among all the gateway knows."""
    _names: list[LocalizedName] = field(init=False, default_factory=list, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.key = (str(self.binding), self.id)

    @property
    def names(self) -> LocalizedName:
        if not self._names:
            self._names.append(LocalizedName(names=self.name_map, default_lang=self.default_lang))
        return self._names[0]


@dataclass(slots=True, unsafe_hash=True)  # not frozen, as cards (above): made by the ten thousand
class ParameterText:
    name: str
    title: str | None
    description: str | None


@dataclass(slots=True, unsafe_hash=True)
class OperationText:
    """What search reads of one operation."""

    name: str
    title: str | None
    description: str
    parameters: tuple[ParameterText, ...]
    reads_only: bool = False
    """The app says the operation changes nothing: MCP's `readOnlyHint`, else an HTTP GET."""


MAX_PARAMETER_TEXTS = 64
"""Parameters kept per operation for search (in declaration order)."""


def card_of(app: AppDescriptor) -> AppCard:
    runs: dict[tuple[str, str | None], int] = {}
    chosen: list[OperationRun] = []
    operation_runs: list[int] = []
    # By id: a section's operations share one channel object, dumped once (and kept here, so
    # that no id is reused while this runs).
    channels: dict[int, tuple[Channel, str]] = {}
    for tool in app.tools:
        channel, call = tool.channel, tool.call
        seen = channels.get(id(channel))
        if seen is None:
            seen = channels[id(channel)] = (channel, _json_of(channel))
        dumped = seen[1]
        kind = call.kind if call is not None else None
        number = runs.get((dumped, kind))
        if number is None:
            number = runs[(dumped, kind)] = len(chosen)
            call_json = _json_of(call) if call is not None else None
            chosen.append(OperationRun(channel.type.value, dumped, call_json, kind))
        operation_runs.append(number)
    probe = server_probe(app) if not (app.tools_declared or app.server_tools_read) else None
    server_run = OperationRun(probe.execution_type.value, _json_of(probe.channel), None) if probe else None
    names = app.names
    source = app.source
    return AppCard(
        id=app.id,
        name_map=dict(names.names),
        default_lang=names.default_lang,
        all_names=tuple(names.all_names()),
        description=app.description,
        aliases=app.aliases,
        version=app.version,
        source_kind=source.kind,
        location=source.location,
        origin=source.origin,
        binding=source.binding,
        platform=app.platform,
        tools_declared=app.tools_declared,
        server_tools_read=app.server_tools_read,
        operations=tuple([tool.name for tool in app.tools]),
        operation_runs=tuple(operation_runs),
        runs=tuple(chosen),
        server_run=server_run,
        api_origins=_api_origins([channel for channel, _ in channels.values()]),
    )


def _json_of(model: BaseModel) -> str:
    """`model.model_dump_json()`, without its Python wrapper (half the cost of a call's: a first
    start dumps a channel and most operations' calls of every file)."""
    return model.__pydantic_serializer__.to_json(model).decode()


def _api_origins(channels: list[Channel]) -> tuple[ApiOrigin, ...]:
    """The origins of the HTTP channels among `channels` (each once, in order)."""
    found: dict[ApiOrigin, None] = {}
    # `type(...) is`: a failed `isinstance` with a pydantic model class costs an ABC check.
    for base in dict.fromkeys([c.base_url for c in channels if type(c) is HttpChannel]):
        origin = url_origin(base)
        if origin is not None:
            found[ApiOrigin(origin.scheme, origin.host, origin.port)] = None
    return tuple(found)


def texts_of(app: AppDescriptor) -> tuple[OperationText, ...]:
    return tuple([_operation_text(tool) for tool in app.tools])


def _operation_text(tool: Tool) -> OperationText:
    annotations = tool.annotations
    title = annotations.title if annotations and annotations.title else None
    properties = tool.parameters.get("properties")
    parameters: tuple[ParameterText, ...] = ()
    if isinstance(properties, dict):
        # Written out, not a call per parameter: a first start makes ~25 of these per app. The
        # names are JSON's, str already, and `x and isinstance(...)` asks of None (most
        # parameters have no title) no more than once.
        texts: list[ParameterText] = []
        for name, schema in itertools.islice(properties.items(), MAX_PARAMETER_TEXTS):
            shown = description = None
            if isinstance(schema, dict):
                shown, description = schema.get("title"), schema.get("description")
                if not (shown and isinstance(shown, str)):
                    shown = None
                if not (description and isinstance(description, str)):
                    description = None
            texts.append(ParameterText(name, shown, description))
        parameters = tuple(texts)
    hint = annotations.read_only_hint if annotations else None
    # `type(...) is`: a failed `isinstance` with a pydantic model class costs an ABC check.
    reads_only = hint if hint is not None else type(tool.call) is HttpCall and tool.call.method == "GET"
    return OperationText(tool.name, title, tool.description, parameters, reads_only)
