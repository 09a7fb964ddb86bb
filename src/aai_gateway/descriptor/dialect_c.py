"""Dialect C (`002_…`): camelCase, one platform per file, BCP 47 name object, six execution types."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from ..errors import Problem, json_pointer
from . import checks
from .model import (
    AcpChannel,
    ApiKeyAuth,
    AppCredentialAuth,
    AppDescriptor,
    AppleEventsChannel,
    Auth,
    Channel,
    ComChannel,
    CookieAuth,
    DbusChannel,
    HttpCall,
    HttpChannel,
    Instructions,
    OAuth2Auth,
    PlatformSection,
    Source,
    StdioChannel,
    Tool,
)
from .names import from_tag_map
from .platforms import ExecutionType
from .raw import CamelRawModel
from .semver import parse_version
from .shared import derived_dbus_names, upper_if_str

NonEmpty = Annotated[str, Field(min_length=1)]
Method = Annotated[
    Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"], BeforeValidator(upper_if_str)
]
CPlatform = Literal["macos", "linux", "windows", "web"]
CExecutionType = Literal["http", "stdio", "acp", "apple-events", "dbus", "com"]
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
    env: dict[str, str] | None = None
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


class CTool(CamelRawModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any]
    returns: dict[str, Any] | None = None
    execution: CToolExecution | None = None


class CDescriptor(CamelRawModel):
    """The aai.json that `aai-gateway schema` publishes for editors."""

    schema_version: str
    version: str
    platform: CPlatform
    app: CApp
    execution: CExecution | None = None
    auth: CAuth | None = None
    tools: list[CTool]


_TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "http": ("baseUrl", "defaultHeaders"),
    "stdio": ("command", "args", "env"),
    "acp": ("start", "env"),
    "apple-events": ("bundleId", "eventClass", "eventId"),
    "dbus": ("service", "objectPath", "interface", "bus"),
    "com": ("progId",),
}
_DEFAULT_TYPE: dict[str, CExecutionType] = {
    "macos": "apple-events",
    "linux": "dbus",
    "windows": "com",
    "web": "http",
}
_AUTH_KEYS: dict[str, str] = {
    "oauth2": "oauth2",
    "apiKey": "api_key",
    "appCredential": "app_credential",
    "cookie": "cookie",
}


def execution_type(doc: CDescriptor) -> CExecutionType:
    return doc.execution.type if doc.execution else _DEFAULT_TYPE[doc.platform]


def check(doc: CDescriptor) -> Iterator[Problem]:
    yield from checks.check_app_id(doc.app.id, "/app/id")
    yield from checks.check_version(doc.version, "/version", allow_two_part=False)
    if doc.app.default_lang not in doc.app.name:
        same = [tag for tag in doc.app.name if tag.lower() == doc.app.default_lang.lower()]
        hint = f"did you mean {same[0]!r}?" if same else "add a name for it or change defaultLang"
        yield Problem(
            "/app/defaultLang",
            f"defaultLang {doc.app.default_lang!r} is not one of the name's languages "
            f"({', '.join(doc.app.name)}); {hint}",
        )
    for tag, text in doc.app.name.items():
        if not text.strip():
            yield Problem(json_pointer("app", "name", tag), "name must not be empty")
    kind = execution_type(doc)
    yield from checks.check_fits(
        ExecutionType(kind),
        doc.platform,
        "/execution/type" if doc.execution else "/platform",
        expressible=typing.get_args(CExecutionType),
    )
    yield from _check_execution(doc, kind)
    yield from _check_auth(doc, kind)
    yield from checks.check_tool_names((t.name, json_pointer("tools", i)) for i, t in enumerate(doc.tools))
    for index, tool in enumerate(doc.tools):
        yield from _check_tool(tool, json_pointer("tools", index), kind)


def _check_execution(doc: CDescriptor, kind: str) -> Iterator[Problem]:
    ex = doc.execution
    if kind == "dbus" and (ex is None or ex.service is None):  # the service name is the app id then
        yield from checks.check_dbus_names(doc.app.id, None, None, "/app", keys=("id", "", ""))
    if ex is None:
        if kind in ("http", "com"):
            needed = "baseUrl" if kind == "http" else "progId"
            yield Problem("/execution", f"platform {doc.platform!r} needs an execution section with {needed}")
        return
    given = {key for key in _ALL_TYPE_FIELDS if getattr(ex, _SNAKE[key]) is not None}
    for key in sorted(given - set(_TYPE_FIELDS[kind])):
        yield Problem(f"/execution/{key}", f"{key} is ignored for execution type {kind!r}", "warning")
    yield from checks.check_timeout(ex.timeout, "/execution/timeout", unit_ms=1)
    if kind == "http":
        if ex.base_url is None:
            yield Problem("/execution/baseUrl", "execution type 'http' needs baseUrl")
        else:
            yield from checks.check_url(ex.base_url, "/execution/baseUrl", what="baseUrl")
        yield from checks.check_headers(ex.default_headers or {}, "/execution/defaultHeaders")
    elif kind == "stdio" and ex.command is None:
        yield Problem("/execution/command", "execution type 'stdio' needs command (the adapter to run)")
    elif kind == "acp" and ex.start is None:
        yield Problem("/execution/start", "execution type 'acp' needs start {command, args, env}")
    elif kind == "com" and ex.prog_id is None:
        yield Problem("/execution/progId", "execution type 'com' needs progId (e.g. 'Example.Application')")
    elif kind == "apple-events":
        for key, code in (("eventClass", ex.event_class), ("eventId", ex.event_id)):
            if code is not None and not _is_four_char_code(code):
                yield Problem(f"/execution/{key}", f"{key} {code!r} must be exactly four characters")
    elif kind == "dbus":
        yield from checks.check_dbus_names(ex.service, ex.object_path, ex.interface, "/execution")


def _is_four_char_code(code: str) -> bool:
    try:
        return len(code.encode("mac_roman")) == 4
    except UnicodeEncodeError:
        return False


def _check_auth(doc: CDescriptor, kind: str) -> Iterator[Problem]:
    auth = doc.auth
    if auth is None:
        return
    if kind != "http":
        yield Problem("/auth", f"auth applies to http execution only, not {kind!r}")
    if getattr(auth, _AUTH_KEYS[auth.type]) is None:
        yield Problem(
            f"/auth/{auth.type}", f"auth type {auth.type!r} needs its settings object {auth.type!r}"
        )
    for other, attr in _AUTH_KEYS.items():
        if other != auth.type and getattr(auth, attr) is not None:
            yield Problem(
                f"/auth/{other}",
                f"{other} settings are ignored because auth type is {auth.type!r}",
                "warning",
            )
    urls: list[tuple[str | None, str, str]] = []
    if auth.oauth2:
        urls += [
            (
                auth.oauth2.authorization_endpoint,
                "/auth/oauth2/authorizationEndpoint",
                "authorizationEndpoint",
            ),
            (auth.oauth2.token_endpoint, "/auth/oauth2/tokenEndpoint", "tokenEndpoint"),
        ]
    if auth.api_key:
        urls.append((auth.api_key.obtain_url, "/auth/apiKey/obtainUrl", "obtainUrl"))
    if auth.app_credential:
        urls.append(
            (auth.app_credential.token_endpoint, "/auth/appCredential/tokenEndpoint", "tokenEndpoint")
        )
        yield from checks.check_timeout(
            auth.app_credential.expires_in,
            "/auth/appCredential/expiresIn",
            unit_ms=1000,
            what="expiresIn",
            maximum_ms=366 * 24 * 3600 * 1000,
        )
    if auth.cookie:
        urls.append((auth.cookie.login_url, "/auth/cookie/loginUrl", "loginUrl"))
    for url, pointer, what in urls:
        if url is not None:
            yield from checks.check_url(url, pointer, what=what)


def _check_tool(tool: CTool, pointer: str, kind: str) -> Iterator[Problem]:
    if not tool.description:
        yield Problem(
            f"{pointer}/description", "tool has no description; agents choose tools by it", "warning"
        )
    yield from checks.check_schema(
        tool.parameters, f"{pointer}/parameters", what="parameters", must_be_object=True
    )
    if tool.returns is not None:
        yield from checks.check_schema(
            tool.returns, f"{pointer}/returns", what="returns", must_be_object=False
        )
    if tool.execution is None:
        return
    if kind != "http":
        yield Problem(
            f"{pointer}/execution",
            f"tool execution (path, method, headers) applies to http only, not {kind!r}",
        )
        return
    yield from checks.check_tool_http(
        tool.execution.path, tool.execution.headers, tool.parameters, f"{pointer}/execution"
    )


_ALL_TYPE_FIELDS = tuple(dict.fromkeys(k for keys in _TYPE_FIELDS.values() for k in keys))
_SNAKE = {
    name: info_name
    for info_name, info in CExecution.model_fields.items()
    for name in [info.alias or info_name]
}


# --------------------------------------------------------------------------- normalize


def normalize(doc: CDescriptor, source: Source) -> AppDescriptor:
    channel = _channel(doc)
    tools = tuple(
        Tool(
            name=t.name,
            description=t.description or "",
            parameters=t.parameters,
            returns=t.returns,
            platform=doc.platform,
            channel=channel,
            call=_http_call(t.execution) if t.execution else (HttpCall() if channel.type == "http" else None),
        )
        for t in doc.tools
    )
    version = parse_version(doc.version)
    assert version is not None
    return AppDescriptor(
        dialect="C",
        schema_version=doc.schema_version,
        version=str(version),
        declared_version=doc.version,
        id=doc.app.id,
        names=from_tag_map(doc.app.name, doc.app.default_lang),
        description=doc.app.description,
        aliases=tuple(doc.app.aliases),
        sections=(
            PlatformSection(
                platform=doc.platform, declared_type=execution_type(doc), channel=channel, tools=tools
            ),
        ),
        platform=doc.platform,
        tools=tools,
        source=source,
    )


def _http_call(ex: CToolExecution) -> HttpCall:
    return HttpCall(path=ex.path, method=ex.method, headers=ex.headers or {})


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
            command=ex.command, args=tuple(ex.args or ()), env=ex.env or {}, timeout_ms=timeout
        )
    if kind == "acp":
        assert ex.start is not None
        env = {**ex.start.env, **(ex.env or {})}
        return AcpChannel(command=ex.start.command, args=tuple(ex.start.args), env=env, timeout_ms=timeout)
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
