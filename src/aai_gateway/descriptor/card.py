"""What the gateway keeps of every app, loaded or not: its card.

A descriptor in full (every schema, every binding) is ~30 KB of objects and takes ~0.4 ms to
parse and check. With thousands of apps the gateway cannot hold, nor at each start rebuild, them
all; yet tools/list, resolving a reference, listing and search concern every app. An `AppCard`
holds exactly what those need: the app's identity (id, names, description, aliases, version,
source), its operations' names, the origins of its HTTP APIs, and per group of operations what
decides whether they can run here (`OperationRun`). The texts search indexes (`OperationText`)
come apart, when an index is built. The full `AppDescriptor` is loaded from its file when an app
is used (a guide, an execution): a card never runs anything.

Cards travel as JSON records (`card_record`, `card_from_record`; `texts_record`,
`texts_from_record`) in the persistent descriptor cache (`discovery/card_cache.py`). Reading one
checks every field's type: a record that is not exactly what `card_record` writes raises
`ValueError`, and the file it stood for is loaded again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import TypeAdapter

from .binding import Binding, binding_for
from .mcp_tools import server_probe
from .model import AppDescriptor, Call, Channel, HttpChannel, Tool
from .names import LocalizedName
from .origin import url_origin
from .platforms import PLATFORMS, ExecutionType, Platform

STAND_IN_PARAMETERS: dict[str, Any] = {"type": "object"}
SourceKind = Literal["file", "web", "bundled", "inline"]
_SOURCE_KINDS: tuple[SourceKind, ...] = ("file", "web", "bundled", "inline")
_CHANNEL: TypeAdapter[Channel] = TypeAdapter(Channel)
_EXECUTION_TYPES = frozenset(kind.value for kind in ExecutionType)
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


@dataclass(frozen=True, slots=True)
class OperationRun:
    """What decides whether an operation can run here: its platform, its channel and its call's
    kind (executors look at nothing else, see `Executor.unavailable_reason`). Operations that
    share these share the answer; `call` is the first such operation's call, as JSON."""

    execution: str  # the channel's execution type
    platform: Platform
    channel: str  # the channel as JSON (`model_dump_json`)
    call: str | None
    call_kind: str | None = None

    @property
    def key(self) -> tuple[str, str, str | None]:
        """What an executor's answer depends on (`call` stands for every call of its kind)."""
        return (self.platform, self.channel, self.call_kind)

    def stand_in(self, name: str) -> Tool:
        """A tool with this run's platform, channel and call, to ask an executor about."""
        return Tool(
            name=name,
            parameters=STAND_IN_PARAMETERS,
            platform=self.platform,
            channel=_CHANNEL.validate_json(self.channel),
            call=None if self.call is None else _CALL.validate_json(self.call),
        )


@dataclass(frozen=True, slots=True)
class ApiOrigin:
    """Where an HTTP channel sends requests: `("https", "api.example.com", 443)`."""

    scheme: str
    host: str
    port: int


@dataclass(frozen=True, slots=True)
class AppCard:
    """Plain data, no pydantic model: a start with thousands of apps makes thousands of these.
    `names` is the descriptor's model, made when first asked for."""

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
        object.__setattr__(self, "key", (str(self.binding), self.id))

    @property
    def names(self) -> LocalizedName:
        if not self._names:
            self._names.append(LocalizedName(names=self.name_map, default_lang=self.default_lang))
        return self._names[0]


@dataclass(frozen=True, slots=True)
class ParameterText:
    name: str
    title: str | None
    description: str | None


@dataclass(frozen=True, slots=True)
class OperationText:
    """What search reads of one operation."""

    name: str
    title: str | None
    description: str
    parameters: tuple[ParameterText, ...]


MAX_PARAMETER_TEXTS = 64
"""Parameters kept per operation for search (in declaration order)."""


def card_of(app: AppDescriptor) -> AppCard:
    runs: dict[tuple[Platform, str, str | None], int] = {}
    chosen: list[OperationRun] = []
    operation_runs: list[int] = []
    for tool in app.tools:
        channel = tool.channel.model_dump_json()
        kind = tool.call.kind if tool.call is not None else None
        number = runs.get((tool.platform, channel, kind))
        if number is None:
            number = runs[(tool.platform, channel, kind)] = len(chosen)
            call = tool.call.model_dump_json() if tool.call is not None else None
            chosen.append(OperationRun(tool.execution_type.value, tool.platform, channel, call, kind))
        operation_runs.append(number)
    probe = server_probe(app) if not (app.tools_declared or app.server_tools_read) else None
    server_run = (
        OperationRun(probe.execution_type.value, probe.platform, probe.channel.model_dump_json(), None)
        if probe
        else None
    )
    return AppCard(
        id=app.id,
        name_map=dict(app.names.names),
        default_lang=app.names.default_lang,
        all_names=tuple(app.names.all_names()),
        description=app.description,
        aliases=app.aliases,
        version=app.version,
        source_kind=app.source.kind,
        location=app.source.location,
        origin=app.source.origin,
        binding=app.binding,
        platform=app.platform,
        tools_declared=app.tools_declared,
        server_tools_read=app.server_tools_read,
        operations=tuple(tool.name for tool in app.tools),
        operation_runs=tuple(operation_runs),
        runs=tuple(chosen),
        server_run=server_run,
        api_origins=_api_origins(app),
    )


def _api_origins(app: AppDescriptor) -> tuple[ApiOrigin, ...]:
    found: dict[ApiOrigin, None] = {}
    for base in dict.fromkeys(t.channel.base_url for t in app.tools if isinstance(t.channel, HttpChannel)):
        origin = url_origin(base)
        if origin is not None:
            found[ApiOrigin(origin.scheme, origin.host, origin.port)] = None
    return tuple(found)


def texts_of(app: AppDescriptor) -> tuple[OperationText, ...]:
    return tuple(_operation_text(tool) for tool in app.tools)


def _operation_text(tool: Tool) -> OperationText:
    title = tool.annotations.title if tool.annotations and tool.annotations.title else None
    properties = tool.parameters.get("properties")
    parameters: list[ParameterText] = []
    if isinstance(properties, dict):
        for name, schema in list(properties.items())[:MAX_PARAMETER_TEXTS]:
            described = schema if isinstance(schema, dict) else {}
            parameters.append(
                ParameterText(
                    str(name),
                    _text_or_none(described.get("title")),
                    _text_or_none(described.get("description")),
                )
            )
    return OperationText(tool.name, title, tool.description, tuple(parameters))


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# --------------------------------------------------------------------------- records


def card_record(card: AppCard) -> list[Any]:
    """`card` as JSON-able data (a list: compact, read back fast)."""
    return [
        card.id,
        card.name_map,
        card.default_lang,
        list(card.all_names),
        card.description,
        list(card.aliases),
        card.version,
        card.source_kind,
        card.location,
        card.origin,
        card.platform,
        card.tools_declared,
        card.server_tools_read,
        list(card.operations),
        list(card.operation_runs),
        [_run_record(run) for run in card.runs],
        None if card.server_run is None else _run_record(card.server_run),
        [[o.scheme, o.host, o.port] for o in card.api_origins],
    ]


_RECORD_LENGTH = 18


def _run_record(run: OperationRun) -> list[Any]:
    return [run.execution, run.platform, run.channel, run.call, run.call_kind]


def card_from_record(record: Any, *, checked: bool = True) -> AppCard:
    """The card `card_record` wrote; ValueError for anything else. (Every start reads thousands:
    the checks are written out, and run in C where they can.) `checked` False: `record` is known
    to be what `card_record` wrote (read back from data whose digest matched), so only its
    shape is relied on."""
    if type(record) is not list or len(record) != _RECORD_LENGTH:
        raise ValueError("not a card record")
    if not checked:
        return _trusted_card(record)
    (app_id, name_map, default_lang, all_names, description, aliases, version, kind, location, origin,
     platform, declared, read, operations, operation_runs, runs, server_run, origins) = record  # fmt: skip
    if not (
        type(app_id) is str
        and type(default_lang) is str
        and type(description) is str
        and type(version) is str
        and type(location) is str
        and (origin is None or type(origin) is str)
        and (platform is None or (type(platform) is str and platform in PLATFORMS))
        and type(declared) is bool
        and type(read) is bool
        and type(name_map) is dict
        and name_map
        and _all_of(str, name_map.values())
        and type(all_names) is list
        and _all_of(str, all_names)
        and type(aliases) is list
        and _all_of(str, aliases)
        and type(operations) is list
        and _all_of(str, operations)
        and type(operation_runs) is list
        and _all_of(int, operation_runs)
        and type(runs) is list
        and type(origins) is list
    ):
        raise ValueError("a card field of the wrong type")
    source_kind = (
        next((known for known in _SOURCE_KINDS if known == kind), None) if type(kind) is str else None
    )
    if source_kind is None:
        raise ValueError("not a source kind")
    run_list = tuple(map(_run, runs))
    if len(operation_runs) != len(operations) or (
        operation_runs and not 0 <= min(operation_runs) <= max(operation_runs) < len(run_list)
    ):
        raise ValueError("operations and runs do not match")
    return AppCard(
        app_id,
        name_map,
        default_lang,
        tuple(all_names),
        description,
        tuple(aliases),
        version,
        source_kind,
        location,
        origin,
        binding_for(source_kind, location, origin),
        platform,
        declared,
        read,
        tuple(operations),
        tuple(operation_runs),
        run_list,
        None if server_run is None else _run(server_run),
        tuple(map(_api_origin, origins)),
    )


def _trusted_card(record: list[Any]) -> AppCard:
    (app_id, name_map, default_lang, all_names, description, aliases, version, kind, location, origin,
     platform, declared, read, operations, operation_runs, runs, server_run, origins) = record  # fmt: skip
    return AppCard(
        app_id,
        name_map,
        default_lang,
        tuple(all_names),
        description,
        tuple(aliases),
        version,
        kind,
        location,
        origin,
        binding_for(kind, location, origin),
        platform,
        declared,
        read,
        tuple(operations),
        tuple(operation_runs),
        tuple(OperationRun(*run) for run in runs),
        None if server_run is None else OperationRun(*server_run),
        tuple(ApiOrigin(*o) for o in origins),
    )


def _all_of(kind: type, values: Iterable[Any]) -> bool:
    """Whether every value is of exactly `kind` (checked in C: `map`, `set`)."""
    return set(map(type, values)) <= {kind}


def texts_record(texts: tuple[OperationText, ...]) -> list[Any]:
    return [
        [t.name, t.title, t.description, [[p.name, p.title, p.description] for p in t.parameters]]
        for t in texts
    ]


def texts_from_record(record: Any) -> tuple[OperationText, ...]:
    """The texts `texts_record` wrote; ValueError for anything else."""
    texts: list[OperationText] = []
    for operation in _list(record):
        name, title, description, parameters = _list(operation, 4)
        texts.append(
            OperationText(
                _text(name),
                _optional_text(title),
                _text(description),
                tuple(_parameter(p) for p in _list(parameters)),
            )
        )
    return tuple(texts)


def _parameter(value: Any) -> ParameterText:
    name, title, description = _list(value, 3)
    return ParameterText(_text(name), _optional_text(title), _optional_text(description))


def _run(value: Any) -> OperationRun:
    execution, platform, channel, call, kind = _list(value, 5)
    if type(execution) is not str or execution not in _EXECUTION_TYPES:
        raise ValueError("unknown execution type")
    return OperationRun(
        _text(execution), _platform(platform), _text(channel), _optional_text(call), _optional_text(kind)
    )


def _api_origin(value: Any) -> ApiOrigin:
    scheme, host, port = _list(value, 3)
    return ApiOrigin(_text(scheme), _text(host), _integer(port))


def _list(value: Any, length: int | None = None) -> list[Any]:
    if type(value) is not list or (length is not None and len(value) != length):
        raise ValueError("not the list a card record holds")
    return value


def _text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError("not a string")
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _integer(value: Any) -> int:
    if type(value) is not int:
        raise ValueError("not an integer")
    return value


def _platform(value: Any) -> Platform:
    if type(value) is not str or value not in PLATFORMS:
        raise ValueError("unknown platform")
    platform: Platform = value
    return platform
