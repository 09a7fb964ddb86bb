"""The canonical descriptor: what every dialect normalizes into and every later layer reads.

A tool carries two parts of its execution binding: the `channel` (how to reach the app: base
URL, command, bus name...; shared by the tools of one platform section) and the `call` (what
this one tool sends: HTTP path, script template, DBus method...). Timeouts are milliseconds.
"""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import Field

from .binding import Binding, binding_for
from .model_auth import Auth, CanonicalModel, EnvironmentReference, McpValue, SecretReference
from .names import LocalizedName
from .platforms import ExecutionType, Platform
from .shown_text import OneLine, ShownText

JsonObject = dict[str, Any]
# Empty dicts by default are `Field(default_factory=dict)`, not `{}`: pydantic deep-copies a `{}`
# default for every model that leaves it out (each operation's call of an HTTP app: two a call).
DEFAULT_TIMEOUT_MS = 30_000
ACP_DEFAULT_TIMEOUT_MS = 600_000
"""ACP agents work for minutes; for them the timeout is an inactivity limit (see executors/acp.py)."""


# --------------------------------------------------------------------------- channels


class HttpChannel(CanonicalModel):
    type: Literal[ExecutionType.HTTP] = ExecutionType.HTTP
    base_url: str
    default_headers: dict[str, str] = Field(default_factory=dict)
    auth: Auth | None = None
    timeout_ms: int | None = None


class StdioChannel(CanonicalModel):
    type: Literal[ExecutionType.STDIO] = ExecutionType.STDIO
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    timeout_ms: int | None = None


class AcpChannel(CanonicalModel):
    type: Literal[ExecutionType.ACP] = ExecutionType.ACP
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    timeout_ms: int | None = None


class AppleEventsChannel(CanonicalModel):
    type: Literal[ExecutionType.APPLE_EVENTS] = ExecutionType.APPLE_EVENTS
    bundle_id: str
    event_class: str = "AAI "
    event_id: str = "call"
    timeout_ms: int | None = None


class ScriptChannel(CanonicalModel):
    """macOS AppleScript or JXA templates (dialect B)."""

    type: Literal[ExecutionType.APPLESCRIPT, ExecutionType.JXA]
    timeout_ms: int | None = None


class DbusChannel(CanonicalModel):
    type: Literal[ExecutionType.DBUS] = ExecutionType.DBUS
    service: str
    object_path: str
    interface: str
    bus: Literal["session", "system"] = "session"
    timeout_ms: int | None = None


class ComChannel(CanonicalModel):
    type: Literal[ExecutionType.COM] = ExecutionType.COM
    prog_id: str | None = None
    timeout_ms: int | None = None


class McpChannel(CanonicalModel):
    """An MCP server: started with `command` (stdio: `args`, `env`, `cwd`) or reached at `url`
    (Streamable HTTP: `headers`), exactly one of the two."""

    type: Literal[ExecutionType.MCP] = ExecutionType.MCP
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, McpValue] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, McpValue] = Field(default_factory=dict)
    timeout_ms: int | None = None

    def model_post_init(self, context: Any, /) -> None:
        # Not a model validator: pydantic runs those again each time a channel made before
        # passes another model's field (every operation and section of a file), this only once,
        # when a channel is validated (made by keyword, `model_validate`, inside a tool's or
        # section's data), where a ValueError here is a ValidationError of the channel.
        # `model_copy` checks nothing, nor does the gateway copy channels.
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP channel has either a command or a url")
        if self.url is not None and (self.args or self.env or self.cwd is not None):
            raise ValueError("args, env and cwd belong to an MCP server started with a command")
        if self.command is not None and self.headers:
            raise ValueError("headers belong to an MCP server reached at a url")

    @property
    def transport(self) -> Literal["stdio", "streamable-http"]:
        return "stdio" if self.command is not None else "streamable-http"

    @property
    def secret_names(self) -> tuple[str, ...]:
        """The keyring secrets the server needs, in file order, each once."""
        values = [*self.env.values(), *self.headers.values()]
        return tuple(dict.fromkeys(v.name for v in values if isinstance(v, SecretReference)))

    @property
    def environment_names(self) -> tuple[str, ...]:
        """The variables of the gateway's environment the server needs, in file order, each once."""
        values = [*self.env.values(), *self.headers.values()]
        return tuple(dict.fromkeys(v.name for v in values if isinstance(v, EnvironmentReference)))


class IntentChannel(CanonicalModel):
    type: Literal[ExecutionType.INTENT] = ExecutionType.INTENT
    package: str
    timeout_ms: int | None = None


class UrlSchemeChannel(CanonicalModel):
    type: Literal[ExecutionType.URL_SCHEME] = ExecutionType.URL_SCHEME
    scheme: str
    timeout_ms: int | None = None


Channel = Annotated[
    HttpChannel
    | StdioChannel
    | AcpChannel
    | AppleEventsChannel
    | ScriptChannel
    | DbusChannel
    | ComChannel
    | IntentChannel
    | UrlSchemeChannel
    | McpChannel,
    Field(discriminator="type"),
]


# --------------------------------------------------------------------------- per-tool calls

HttpMethod = Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


class HttpCall(CanonicalModel):
    kind: Literal["http"] = "http"
    path: str | None = None
    method: HttpMethod | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None
    query_params: JsonObject = Field(default_factory=dict)
    output_parser: Literal["json", "text"] | None = None


class ScriptCall(CanonicalModel):
    kind: Literal["script"] = "script"
    script: str
    output_parser: Literal["result as text", "result as record"] | None = None


class ComAction(CanonicalModel):
    action: Literal["create", "call", "set", "get", "return"]
    var: str | None = None
    object: str | None = None
    progid: str | None = None
    method: str | None = None
    property: str | None = None
    value: Any = None
    args: tuple[Any, ...] = ()


class ComCall(CanonicalModel):
    kind: Literal["com"] = "com"
    actions: tuple[ComAction, ...]
    output_parser: Literal["last_result"] | None = None


class DbusCall(CanonicalModel):
    """`signature` None: the method takes the JSON request as its one string argument. Otherwise
    the method takes typed arguments: `args` names the parameter passed for each complete type of
    `signature`, in order (`""`: no arguments)."""

    kind: Literal["dbus"] = "dbus"
    method: str
    output_parser: Literal["json", "string"] | None = None
    signature: str | None = None
    args: tuple[str, ...] = ()


class IntentCall(CanonicalModel):
    kind: Literal["intent"] = "intent"
    action: str
    extras: JsonObject = Field(default_factory=dict)
    result_type: Literal["content_provider", "broadcast"] | None = None
    result_uri: str | None = None


class UrlSchemeCall(CanonicalModel):
    kind: Literal["url_scheme"] = "url_scheme"
    url_template: str
    result_type: Literal["app_group", "clipboard"] | None = None
    app_group_id: str | None = None


Call = Annotated[
    HttpCall | ScriptCall | ComCall | DbusCall | IntentCall | UrlSchemeCall,
    Field(discriminator="kind"),
]


# --------------------------------------------------------------------------- tools and apps


class ToolAnnotations(CanonicalModel):
    """MCP's tool annotations: hints about what a tool does, as its app declares them (not
    guarantees). None: not declared (MCP's defaults are read-only false, destructive true,
    idempotent false, open-world true)."""

    title: OneLine | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class Tool(CanonicalModel):
    name: str
    description: ShownText = ""
    parameters: JsonObject
    returns: JsonObject | None = None
    annotations: ToolAnnotations | None = None
    channel: Channel
    call: Call | None = None
    timeout_ms: int | None = None

    @property
    def execution_type(self) -> ExecutionType:
        return self.channel.type

    @property
    def effective_timeout_ms(self) -> int:
        if self.timeout_ms is not None:
            return self.timeout_ms
        if self.channel.timeout_ms is not None:
            return self.channel.timeout_ms
        return ACP_DEFAULT_TIMEOUT_MS if isinstance(self.channel, AcpChannel) else DEFAULT_TIMEOUT_MS


class PlatformSection(CanonicalModel):
    """Everything one platform of a descriptor declares (dialects A and C have exactly one)."""

    platform: Platform
    declared_type: str
    channel: Channel
    tools: tuple[Tool, ...]


class Source(CanonicalModel):
    kind: Literal["file", "web", "bundled", "inline"]
    location: str
    origin: str | None = None

    def describe(self) -> str:
        return self.location

    @cached_property
    def binding(self) -> Binding:
        """Where the descriptor came from, as credentials, consent and resolution know it."""
        return binding_for(self.kind, self.location, self.origin)


Dialect = Literal["A", "B", "C"]


class AppDescriptor(CanonicalModel):
    dialect: Dialect
    schema_version: str
    version: str
    declared_version: str
    id: str
    names: LocalizedName
    description: OneLine
    aliases: tuple[OneLine, ...] = ()
    sections: tuple[PlatformSection, ...]
    platform: Platform | None
    tools: tuple[Tool, ...]
    tools_declared: bool = True
    """False: the descriptor leaves its tools to its MCP server (an `mcp` execution without
    `tools`); `tools` is then empty until the gateway fills it from the server's tools/list."""
    server_tools_read: bool = False
    """True once `tools` holds what the app's MCP server listed (maybe nothing): a snapshot of
    its tools/list was applied (`descriptor/mcp_tools.py`)."""
    source: Source

    @property
    def declared_platforms(self) -> tuple[Platform, ...]:
        return tuple(s.platform for s in self.sections)

    @property
    def execution_types(self) -> tuple[ExecutionType, ...]:
        return tuple(dict.fromkeys(t.execution_type for t in self.tools))

    @property
    def binding(self) -> Binding:
        return self.source.binding

    @property
    def all_names(self) -> tuple[str, ...]:
        """Every distinct name, the default first."""
        return tuple(self.names.all_names())

    @cached_property
    def _tools_by_name(self) -> dict[str, Tool]:
        return {tool.name: tool for tool in reversed(self.tools)}

    def tool(self, name: str) -> Tool | None:
        """The operation called `name` (a dictionary read: big apps have hundreds)."""
        return self._tools_by_name.get(name)

    def section(self, platform: Platform) -> PlatformSection | None:
        return next((s for s in self.sections if s.platform == platform), None)

    @property
    def mcp_server_url(self) -> str | None:
        """The URL of the Streamable HTTP MCP server the app runs on, if it runs on one."""
        for section in self.sections:
            if isinstance(section.channel, McpChannel) and section.channel.url is not None:
                return section.channel.url
        return None
