"""Dialect C (`002_…`): camelCase, one platform per file, BCP 47 name object, seven execution types
(the six of the spec and `mcp`, whose file may leave out `platform` and `tools`: dialect_c_mcp.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from . import checks, dialect_c_mcp, prevalidated
from .dialect_c_mcp import CValue
from .model import (
    AcpChannel,
    AppDescriptor,
    AppleEventsChannel,
    Channel,
    ComChannel,
    DbusChannel,
    HttpCall,
    HttpChannel,
    Source,
    StdioChannel,
    Tool,
    ToolAnnotations,
)
from .model_auth import ApiKeyAuth, AppCredentialAuth, Auth, CookieAuth, Instructions, OAuth2Auth
from .platforms import DESKTOP_PLATFORMS, Platform
from .raw import CamelRawModel, validated
from .semver import parse_version
from .shared import derived_dbus_names, upper_if_str

NonEmpty = Annotated[str, Field(min_length=1)]
Method = Annotated[
    Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"], BeforeValidator(upper_if_str)
]
CPlatform = Literal["macos", "linux", "windows", "web"]
CExecutionType = Literal["http", "stdio", "acp", "apple-events", "dbus", "com", "mcp"]
CAuthType = Literal["oauth2", "apiKey", "appCredential", "cookie"]


class CInstructions(CamelRawModel):
    short: str
    detailed: str | None = None
    help_url: str | None = None
    screenshot_url: str | None = None


class CApp(CamelRawModel):
    id: NonEmpty
    name: dict[str, str] = Field(min_length=1)
    default_lang: NonEmpty
    description: str
    aliases: list[str] = []


class CAcpStart(CamelRawModel):
    command: NonEmpty
    args: list[str] = []
    env: dict[str, str] = {}


class CExecution(CamelRawModel):
    type: CExecutionType
    base_url: str | None = None
    default_headers: dict[str, str] | None = None
    command: NonEmpty | None = None
    args: list[str] | None = None
    env: dict[str, CValue] | None = None
    cwd: NonEmpty | None = None
    url: str | None = None
    headers: dict[str, CValue] | None = None
    timeout: float | None = None
    start: CAcpStart | None = None
    bundle_id: NonEmpty | None = None
    event_class: str | None = None
    event_id: str | None = None
    service: NonEmpty | None = None
    object_path: NonEmpty | None = None
    interface: NonEmpty | None = None
    bus: Literal["session", "system"] | None = None
    prog_id: NonEmpty | None = None


class CPkce(CamelRawModel):
    method: Literal["S256"]


class COAuth2(CamelRawModel):
    authorization_endpoint: str
    token_endpoint: str
    scopes: list[str]
    pkce: CPkce | None = None


class CApiKey(CamelRawModel):
    location: Literal["header", "query"]
    name: NonEmpty
    prefix: str | None = None
    obtain_url: str
    instructions: CInstructions | None = None


class CAppCredential(CamelRawModel):
    token_endpoint: str
    token_type: Literal["tenantAccessToken", "appAccessToken", "userAccessToken"]
    expires_in: float | None = None
    instructions: CInstructions | None = None


class CCookie(CamelRawModel):
    login_url: str
    required_cookies: list[str]
    domain: NonEmpty
    instructions: str | None = None


class CAuth(CamelRawModel):
    type: CAuthType
    oauth2: COAuth2 | None = None
    api_key: CApiKey | None = None
    app_credential: CAppCredential | None = None
    cookie: CCookie | None = None


class CToolExecution(CamelRawModel):
    path: str | None = None
    method: Method | None = None
    headers: dict[str, str] | None = None


class CToolAnnotations(CamelRawModel):
    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class CTool(CamelRawModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any]
    returns: dict[str, Any] | None = None
    annotations: CToolAnnotations | None = None
    execution: CToolExecution | None = None


class CDescriptor(CamelRawModel):
    """The aai.json that `aai-gateway schema` publishes for editors. `platform` and `tools` may
    be left out by an `mcp` descriptor only (`parse` holds every other file to them)."""

    schema_version: str
    version: str
    platform: CPlatform | None = None
    app: CApp
    execution: CExecution | None = None
    auth: CAuth | None = None
    tools: list[CTool] | None = None


class CDescriptorWithPlatform(CDescriptor):
    """A descriptor of any type but `mcp`: its app runs on the one platform it names."""

    platform: CPlatform
    tools: list[CTool]


def parse(document: dict[str, Any], *, known_fields_only: bool = False) -> CDescriptor:
    """The raw model of a dialect-C document, raising pydantic's ValidationError (`validated`)."""
    execution = document.get("execution")
    mcp = isinstance(execution, dict) and execution.get("type") == "mcp"
    model = CDescriptor if mcp else CDescriptorWithPlatform
    return validated(model, document, known_fields_only=known_fields_only)


_DEFAULT_TYPE: dict[str, CExecutionType] = {
    "macos": "apple-events",
    "linux": "dbus",
    "windows": "com",
    "web": "http",
}


def execution_type(doc: CDescriptor) -> CExecutionType:
    if doc.execution:
        return doc.execution.type
    assert doc.platform is not None, "only an mcp descriptor may leave out platform (parse)"
    return _DEFAULT_TYPE[doc.platform]


# --------------------------------------------------------------------------- normalize


def normalize(doc: CDescriptor, source: Source, host: Platform) -> AppDescriptor:
    """A file without `platform` (mcp only) declares every desktop platform; its tools are
    active on the host when the host is one of them."""
    channel = _channel(doc)
    platforms = (doc.platform,) if doc.platform else DESKTOP_PLATFORMS
    # The operations without settings of their own share one call, as they share the channel.
    plain_call = (
        prevalidated.http_call(path=None, method=None, headers={}) if channel.type == "http" else None
    )
    tools = tuple([_tool(t, channel, plain_call) for t in doc.tools or ()])
    declared_type = execution_type(doc)
    # The desktops of a file without `platform` share one channel, and so the same tool objects.
    sections = tuple(
        [
            prevalidated.section(platform=platform, declared_type=declared_type, channel=channel, tools=tools)
            for platform in platforms
        ]
    )
    active = next((s for s in sections if s.platform in (doc.platform, host)), None)
    version = parse_version(doc.version)
    assert version is not None
    return prevalidated.app(
        dialect="C",
        schema_version=doc.schema_version,
        version=str(version),
        declared_version=doc.version,
        id=doc.app.id,
        names=prevalidated.localized_name(names=doc.app.name, default_lang=doc.app.default_lang),
        description=doc.app.description,
        aliases=tuple(doc.app.aliases),
        sections=sections,
        platform=active.platform if active else None,
        tools=active.tools if active else (),
        tools_declared=doc.tools is not None,
        source=source,
    )


def _tool(raw: CTool, channel: Channel, plain_call: HttpCall | None) -> Tool:
    return prevalidated.tool(
        name=raw.name,
        description=raw.description or "",
        parameters=raw.parameters,
        returns=raw.returns,
        annotations=_annotations(raw.annotations),
        channel=channel,
        call=_http_call(raw.execution) if raw.execution else plain_call,
        timeout_ms=None,
    )


def _annotations(raw: CToolAnnotations | None) -> ToolAnnotations | None:
    if raw is None:
        return None
    return prevalidated.tool_annotations(
        title=raw.title,
        read_only_hint=raw.read_only_hint,
        destructive_hint=raw.destructive_hint,
        idempotent_hint=raw.idempotent_hint,
        open_world_hint=raw.open_world_hint,
    )


def _http_call(ex: CToolExecution) -> HttpCall:
    return prevalidated.http_call(path=ex.path, method=ex.method, headers=ex.headers or {})


def _channel(doc: CDescriptor) -> Channel:
    kind = execution_type(doc)
    ex = doc.execution or CExecution(type=kind)
    timeout = checks.timeout_ms(ex.timeout, unit_ms=1)
    if kind == "http":
        assert ex.base_url is not None
        return HttpChannel(
            base_url=ex.base_url,
            default_headers=ex.default_headers or {},
            auth=_auth(doc.auth),
            timeout_ms=timeout,
        )
    if kind == "stdio":
        assert ex.command is not None
        return StdioChannel(
            command=ex.command,
            args=tuple(ex.args or ()),
            env=dialect_c_mcp.literal_env(ex.env),
            timeout_ms=timeout,
        )
    if kind == "acp":
        assert ex.start is not None
        env = {**dialect_c_mcp.literal_env(ex.env), **ex.start.env}  # the ACP-specific start.env wins
        return AcpChannel(command=ex.start.command, args=tuple(ex.start.args), env=env, timeout_ms=timeout)
    if kind == "mcp":
        return dialect_c_mcp.channel(ex, timeout)
    if kind == "apple-events":
        return AppleEventsChannel(
            bundle_id=ex.bundle_id or doc.app.id,
            event_class=ex.event_class or "AAI ",
            event_id=ex.event_id or "call",
            timeout_ms=timeout,
        )
    if kind == "dbus":
        service, path, interface = derived_dbus_names(ex.service or doc.app.id, ex.object_path, ex.interface)
        return DbusChannel(
            service=service,
            object_path=path,
            interface=interface,
            bus=ex.bus or "session",
            timeout_ms=timeout,
        )
    return ComChannel(prog_id=ex.prog_id, timeout_ms=timeout)


def _instructions(raw: CInstructions | None) -> Instructions | None:
    if raw is None:
        return None
    return Instructions(
        short=raw.short, detailed=raw.detailed, help_url=raw.help_url, screenshot_url=raw.screenshot_url
    )


def _auth(auth: CAuth | None) -> Auth | None:
    if auth is None:
        return None
    if auth.type == "oauth2" and auth.oauth2:
        o = auth.oauth2
        return OAuth2Auth(
            authorization_endpoint=o.authorization_endpoint,
            token_endpoint=o.token_endpoint,
            scopes=tuple(o.scopes),
            pkce_method=o.pkce.method if o.pkce else None,
        )
    if auth.type == "apiKey" and auth.api_key:
        k = auth.api_key
        return ApiKeyAuth(
            location=k.location,
            name=k.name,
            prefix=k.prefix,
            obtain_url=k.obtain_url,
            instructions=_instructions(k.instructions),
        )
    if auth.type == "appCredential" and auth.app_credential:
        a = auth.app_credential
        return AppCredentialAuth(
            token_endpoint=a.token_endpoint,
            token_type=a.token_type,
            expires_in=round(a.expires_in) if a.expires_in is not None else 7200,
            instructions=_instructions(a.instructions),
        )
    if auth.type == "cookie" and auth.cookie:
        c = auth.cookie
        return CookieAuth(
            login_url=c.login_url,
            required_cookies=tuple(c.required_cookies),
            domain=c.domain,
            instructions=Instructions(short=c.instructions) if c.instructions else None,
        )
    raise AssertionError(f"auth {auth.type} passed checks without its settings")
