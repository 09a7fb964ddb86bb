"""Dialect B (`001_…`, `003_…`): `appId` + `platforms{}`, one automation per platform, per-tool bindings.

Every platform section is parsed and validated; the descriptor's active tools are the host OS
section's, plus the `web` tools the OS section lacks (docs/aai-json.md §4).

Which platform a section or tool is for is asked of its exact type (`type(raw) is BLinux`): the
raw models have no subclasses, and `isinstance` with a pydantic model class that does not match
costs an ABC check, several per operation of a file (dialect_b_checks.py asks the same way).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from . import prevalidated
from .checks import timeout_ms
from .model import (
    AppDescriptor,
    Call,
    Channel,
    ComAction,
    ComCall,
    ComChannel,
    DbusChannel,
    HttpCall,
    HttpChannel,
    IntentCall,
    IntentChannel,
    PlatformSection,
    ScriptCall,
    ScriptChannel,
    Source,
    Tool,
    UrlSchemeCall,
    UrlSchemeChannel,
)
from .model_auth import ApiKeyAuth, Auth, OAuth2Auth
from .names import from_pipe_string
from .platforms import ExecutionType, Platform
from .raw import RawModel
from .semver import parse_version
from .shared import upper_if_str

NonEmpty = Annotated[str, Field(min_length=1)]
Method = Annotated[
    Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"], BeforeValidator(upper_if_str)
]


class BTool(RawModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any]
    returns: dict[str, Any] | None = None
    timeout: float | None = None


class BMacosTool(BTool):
    script: str
    output_parser: Literal["result as text", "result as record"] | None = None


class BComAction(RawModel):
    action: Literal["create", "call", "set", "get", "return"]
    var: NonEmpty | None = None
    object: NonEmpty | None = None
    progid: NonEmpty | None = None
    method: NonEmpty | None = None
    property: NonEmpty | None = None
    value: Any = None
    args: list[Any] | None = None


class BWindowsTool(BTool):
    script: list[BComAction]
    output_parser: Literal["last_result"] | None = None


class BLinuxTool(BTool):
    method: NonEmpty
    output_parser: Literal["json", "string"] | None = None
    signature: str | None = None
    args: list[str] | None = None


class BAndroidTool(BTool):
    action: NonEmpty
    extras: dict[str, Any] | None = None
    result_type: Literal["content_provider", "broadcast"] | None = None
    result_uri: str | None = None


class BIosTool(BTool):
    url_template: NonEmpty
    result_type: Literal["app_group", "clipboard"] | None = None
    app_group_id: str | None = None


class BWebTool(BTool):
    endpoint: str
    method: Method | None = None
    body: Any = None
    query_params: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    output_parser: Literal["json", "text"] | None = None


class BAuth(RawModel):
    type: Literal["oauth2", "api_key", "bearer"]
    auth_url: str | None = None
    token_url: str | None = None
    scopes: list[str] | None = None
    token_placement: Literal["header", "query"] | None = None
    token_prefix: str | None = None
    env_var: NonEmpty | None = None
    key_name: NonEmpty | None = None
    key_placement: Literal["header", "query"] | None = None


class BMacos(RawModel):
    automation: Literal["applescript", "jxa"]
    tools: list[BMacosTool]


class BWindows(RawModel):
    automation: Literal["com"]
    progid: NonEmpty | None = None
    tools: list[BWindowsTool]


class BLinux(RawModel):
    automation: Literal["dbus"]
    service: NonEmpty
    object: NonEmpty
    interface: NonEmpty
    bus: Literal["session", "system"] | None = None
    tools: list[BLinuxTool]


class BAndroid(RawModel):
    automation: Literal["intent"]
    package: NonEmpty
    tools: list[BAndroidTool]


class BIos(RawModel):
    automation: Literal["url_scheme"]
    scheme: NonEmpty
    tools: list[BIosTool]


class BWeb(RawModel):
    automation: Literal["restapi"]
    base_url: str
    auth: BAuth | None = None
    default_headers: dict[str, str] | None = None
    tools: list[BWebTool]


class BPlatforms(RawModel):
    macos: BMacos | None = None
    windows: BWindows | None = None
    linux: BLinux | None = None
    android: BAndroid | None = None
    ios: BIos | None = None
    web: BWeb | None = None


class BDescriptor(RawModel):
    schema_version: str
    app_id: NonEmpty = Field(alias="appId")
    name: NonEmpty
    description: str
    version: str
    aliases: list[str] = Field(default_factory=list)  # a `[]` default is deep-copied per model
    platforms: BPlatforms


PlatformSectionRaw = BMacos | BWindows | BLinux | BAndroid | BIos | BWeb
ORDER: tuple[Platform, ...] = ("macos", "windows", "linux", "android", "ios", "web")


def present_sections(doc: BDescriptor) -> list[tuple[Platform, PlatformSectionRaw]]:
    found: list[tuple[Platform, PlatformSectionRaw]] = []
    for platform in ORDER:
        section = getattr(doc.platforms, platform)
        if section is not None:
            found.append((platform, section))
    return found


# --------------------------------------------------------------------------- normalize


def normalize(doc: BDescriptor, source: Source, host: Platform) -> AppDescriptor:
    sections = tuple(_section(platform, raw) for platform, raw in present_sections(doc))
    by_platform = {s.platform: s for s in sections}
    active: list[Tool] = list(by_platform[host].tools) if host in by_platform else []
    if "web" in by_platform and host != "web":
        names = {t.name for t in active}
        active += [t for t in by_platform["web"].tools if t.name not in names]
    chosen: Platform | None = host if host in by_platform else ("web" if "web" in by_platform else None)
    version = parse_version(doc.version, allow_two_part=True)
    assert version is not None
    return prevalidated.app(
        dialect="B",
        schema_version=doc.schema_version,
        version=str(version),
        declared_version=doc.version,
        id=doc.app_id,
        names=from_pipe_string(doc.name),
        description=doc.description,
        aliases=tuple(doc.aliases),
        sections=sections,
        platform=chosen,
        tools=tuple(active),
        tools_declared=True,
        source=source,
    )


# The spec's per-platform timeout units and defaults; other platforms use the gateway default.
_DEFAULT_TIMEOUT_MS: dict[type, int] = {BAndroid: 5000, BIos: 10_000}


def timeout_unit_ms(section: PlatformSectionRaw) -> int:
    """Dialect B writes timeouts in seconds, except Android, in milliseconds."""
    return 1 if type(section) is BAndroid else 1000


def _section(platform: Platform, raw: PlatformSectionRaw) -> PlatformSection:
    channel = _channel(raw)
    tools = tuple(
        [
            prevalidated.file_tool(
                t,
                channel=channel,
                call=_call(t),
                timeout_ms=timeout_ms(t.timeout, unit_ms=timeout_unit_ms(raw))
                or _DEFAULT_TIMEOUT_MS.get(type(raw)),
            )
            for t in raw.tools
        ]
    )
    return prevalidated.section(platform=platform, declared_type=raw.automation, channel=channel, tools=tools)


def _channel(raw: PlatformSectionRaw) -> Channel:
    if isinstance(raw, BMacos):
        return ScriptChannel(type=ExecutionType(raw.automation))
    if isinstance(raw, BWindows):
        return ComChannel(prog_id=raw.progid)
    if isinstance(raw, BLinux):
        return DbusChannel(
            service=raw.service, object_path=raw.object, interface=raw.interface, bus=raw.bus or "session"
        )
    if isinstance(raw, BAndroid):
        return IntentChannel(package=raw.package)
    if isinstance(raw, BIos):
        return UrlSchemeChannel(scheme=raw.scheme)
    return HttpChannel(base_url=raw.base_url, default_headers=raw.default_headers or {}, auth=_auth(raw.auth))


def _call(tool: BTool) -> Call:
    if type(tool) is BMacosTool:
        return ScriptCall(script=tool.script, output_parser=tool.output_parser)
    if type(tool) is BWindowsTool:
        actions = tuple(
            ComAction(
                action=a.action,
                var=a.var,
                object=a.object,
                progid=a.progid,
                method=a.method,
                property=a.property,
                value=a.value,
                args=tuple(a.args or ()),
            )
            for a in tool.script
        )
        return ComCall(actions=actions, output_parser=tool.output_parser)
    if type(tool) is BLinuxTool:
        return prevalidated.dbus_call(
            method=tool.method,
            output_parser=tool.output_parser,
            signature=tool.signature,
            args=tuple(tool.args or ()),
        )
    if type(tool) is BAndroidTool:
        return IntentCall(
            action=tool.action,
            extras=tool.extras or {},
            result_type=tool.result_type,
            result_uri=tool.result_uri,
        )
    if type(tool) is BIosTool:
        return UrlSchemeCall(
            url_template=tool.url_template, result_type=tool.result_type, app_group_id=tool.app_group_id
        )
    assert isinstance(tool, BWebTool)
    return HttpCall(
        path=tool.endpoint,
        method=tool.method,
        headers=tool.headers or {},
        body=tool.body,
        query_params=tool.query_params or {},
        output_parser=tool.output_parser,
    )


def _auth(auth: BAuth | None) -> Auth | None:
    if auth is None:
        return None
    if auth.type == "oauth2":
        assert auth.auth_url is not None and auth.token_url is not None
        return OAuth2Auth(
            authorization_endpoint=auth.auth_url,
            token_endpoint=auth.token_url,
            scopes=tuple(auth.scopes or ()),
            token_placement=auth.token_placement or "header",
            token_prefix=auth.token_prefix if auth.token_prefix is not None else "Bearer",
        )
    if auth.type == "api_key":
        assert auth.key_name is not None
        return ApiKeyAuth(
            location=auth.key_placement or auth.token_placement or "header",
            name=auth.key_name,
            prefix=auth.token_prefix,
            env_var=auth.env_var,
            declared_type="api_key",
        )
    placement = auth.token_placement or "header"
    return ApiKeyAuth(
        location=placement,
        name="Authorization" if placement == "header" else "access_token",
        prefix=(auth.token_prefix if auth.token_prefix is not None else "Bearer")
        if placement == "header"
        else None,
        env_var=auth.env_var,
        declared_type="bearer",
    )
